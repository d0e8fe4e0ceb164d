#include "powershape/workload/lmhead_options.hpp"

#include <cmath>
#include <sstream>

namespace powershape::workload {
namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

std::string lmhead_options_problem(const LmHeadOptions& o) {
  if (o.chunks < 0 || o.chunks > kMaxChunks) {
    return "chunks must be in 1.." + std::to_string(kMaxChunks) + " (0: the default), not " +
           std::to_string(o.chunks);
  }
  if (o.tokens_per_chunk < 0)
    return "tokens_per_chunk must not be negative, not " + std::to_string(o.tokens_per_chunk);
  if (!(o.label_smoothing >= 0 && o.label_smoothing < 1))
    return "label_smoothing must be in [0, 1), not " + number(o.label_smoothing);
  if (!(o.z_loss >= 0 && std::isfinite(o.z_loss)))
    return "z_loss must be finite and not negative, not " + number(o.z_loss);
  if (!(o.softcap >= 0 && std::isfinite(o.softcap)))
    return "softcap must be finite and not negative (0: none), not " + number(o.softcap);
  if (!std::isfinite(o.grad_scale)) return "grad_scale must be finite, not " + number(o.grad_scale);
  return "";
}

}  // namespace powershape::workload
