#pragma once
// The scratch the logits product with the exponent in it leaves for its finishing kernel
// (logits_exp.cu writes it, logits_exp_finish.cu reads it): three arrays side by side.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace powershape::kernels::logits_exp_detail {

constexpr uint32_t kUnset = 0xFFFFFFFFu;  // a row's offset before any tile has set it (a NaN)

// Where the scratch's three arrays start: each row's offset (float bits), each row's target logit,
// and each (row, tile column)'s offset used and sum of exp(z - c), a row's tiles side by side.
struct Scratch {
  uint32_t* offset;
  float* target_logit;
  float2* tiles;
};

inline std::size_t align256(std::size_t b) { return (b + 255) / 256 * 256; }

inline Scratch scratch_of(void* p, int64_t rows) {
  auto* b = static_cast<char*>(p);
  const std::size_t r = align256(static_cast<std::size_t>(rows) * 4);
  return {reinterpret_cast<uint32_t*>(b), reinterpret_cast<float*>(b + r),
          reinterpret_cast<float2*>(b + 2 * r)};
}

}  // namespace powershape::kernels::logits_exp_detail
