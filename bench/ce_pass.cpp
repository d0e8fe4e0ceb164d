// The fused softmax / cross-entropy passes alone (forward and gradient, in place): the two-read
// pass (cross_entropy) and the one-read pass (cross_entropy_scaled), against a device-to-device
// copy of the same logits measured in the same run: the copy reads and writes each byte once, the
// least any in-place pass must move. Median of 20 runs on fresh random logits.
//   ce_pass [--shapes ROWS,V;ROWS,V...]
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ce_params.hpp"
#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/event_pair.hpp"
#include "powershape/kernels/synthetic.cuh"

using namespace powershape::kernels;

namespace {

struct Shape {
  int64_t rows, v;
};

std::vector<Shape> parse(const std::string& s) {
  std::vector<Shape> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ';');) {
    Shape sh{};
    if (std::sscanf(item.c_str(), "%ld,%ld", &sh.rows, &sh.v) != 2 || sh.rows < 1 || sh.v < 1) {
      throw std::invalid_argument("--shapes: expected ROWS,V;ROWS,V..., found '" + item + "'");
    }
    out.push_back(sh);
  }
  return out;
}

// Median ms of `runs` timed calls of `body`, `prepare` (untimed) before each.
template <class Prepare, class Body>
double median_ms(int runs, Prepare prepare, Body body) {
  EventPair timer;
  std::vector<double> ms;
  for (int i = 0; i < runs + 2; ++i) {  // two warm-ups
    prepare();
    const double m = timer.time(body);
    if (i >= 2) ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string shapes = "16384,151936;4096,128256;16384,32000;2048,262144";
  for (int i = 1; i < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--shapes" && i + 1 < argc) {
      shapes = argv[i + 1];
    } else {
      std::fprintf(stderr, "ce_pass: unknown option %s (usage: ce_pass [--shapes ROWS,V;...])\n",
                   k.c_str());
      return 2;
    }
  }
  try {
    std::printf("%-16s %-9s %9s %9s %10s %s\n", "rows x V", "pass", "ms", "copy ms", "GB/s",
                "copy / pass");
    for (const Shape& sh : parse(shapes)) {
      const int64_t ld = (sh.v + 7) / 8 * 8, count = sh.rows * ld;
      const auto bytes = static_cast<std::size_t>(count) * 2;
      __nv_bfloat16 *logits = nullptr, *copy = nullptr;
      int32_t* targets = nullptr;
      float* scratch = nullptr;
      int* valid = nullptr;
      PS_CUDA(cudaMalloc(&logits, bytes));
      PS_CUDA(cudaMalloc(&copy, bytes));
      PS_CUDA(cudaMalloc(&targets, sh.rows * 4));
      PS_CUDA(cudaMalloc(&scratch, sh.rows * 16));
      PS_CUDA(cudaMalloc(&valid, sizeof(int)));
      std::vector<int32_t> t(static_cast<std::size_t>(sh.rows));
      for (int64_t r = 0; r < sh.rows; ++r)
        t[static_cast<std::size_t>(r)] = static_cast<int32_t>((r * 7919) % sh.v);
      PS_CUDA(cudaMemcpy(targets, t.data(), t.size() * 4, cudaMemcpyHostToDevice));
      count_valid(targets, false, sh.rows, -100, valid, nullptr);
      const CrossEntropyParams p =
          bench_pass(logits, ld, sh.v, targets, valid, scratch, sh.rows, true);
      uint64_t seed = 1;
      auto refill = [&] { fill_random_bf16(logits, count, seed++, 8.0f, nullptr); };
      const double cp = median_ms(
          20, [] {},
          [&] { PS_CUDA(cudaMemcpyAsync(copy, logits, bytes, cudaMemcpyDeviceToDevice)); });
      const std::pair<const char*, void (*)(const CrossEntropyParams&, int64_t, cudaStream_t)>
          passes[] = {{"two-read", cross_entropy}, {"one-read", cross_entropy_scaled}};
      for (const auto& [name, run] : passes) {
        const double ms = median_ms(20, refill, [&] { run(p, sh.rows, nullptr); });
        std::printf("%-16s %-9s %9.3f %9.3f %10.0f %11.3f\n",
                    (std::to_string(sh.rows) + "x" + std::to_string(sh.v)).c_str(), name, ms, cp,
                    2.0 * static_cast<double>(bytes) / ms * 1e-6, cp / ms);
      }
      std::fflush(stdout);
      for (void* q :
           {static_cast<void*>(logits), static_cast<void*>(copy), static_cast<void*>(targets),
            static_cast<void*>(scratch), static_cast<void*>(valid)}) {
        PS_CUDA(cudaFree(q));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ce_pass: %s\n", e.what());
    return 1;
  }
  return 0;
}
