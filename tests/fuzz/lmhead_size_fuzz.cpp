// libFuzzer target: the LM head op's workspace arithmetic (workload/lmhead_workspace.hpp). The
// input is N, D, V, chunks and tokens per chunk as raw integers (any value, negative and huge
// included). Either it throws a reason, or the layout it gives holds: every part inside the total,
// each on 256 bytes, and the logits' part at least one chunk of rows x V bf16 values, so that the
// op never trusts a size that wrapped around.
#include <cstring>

#include "fuzz_input.hpp"
#include "powershape/workload/lmhead_workspace.hpp"

using namespace powershape;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int64_t x[5] = {};
  std::memcpy(x, data, std::min(size, sizeof x));
  workload::LmHeadOptions o;
  o.chunks = static_cast<int>(x[3]);
  o.tokens_per_chunk = x[4];
  fuzz::expect_clean([&] {
    const auto l = workload::lmhead_layout(x[0], x[1], x[2], o);
    const auto rows = static_cast<unsigned __int128>(l.rows);
    if (l.rows < 1 || l.rows > x[0] || l.ld < x[2] ||
        static_cast<unsigned __int128>(l.token_loss - l.logits) < rows * l.ld * 2 ||
        l.exp_scratch > l.total || l.total % 256 != 0 || l.lse % 256 != 0)
      __builtin_trap();
  });
  return 0;
}
