#include <algorithm>

#include "powershape/kernels/block_reduce.cuh"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/synthetic.cuh"

namespace powershape::kernels {
namespace {

__global__ void fill_kernel(__nv_bfloat16* p, int64_t n, uint64_t seed, float scale) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint64_t x = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ULL ^ seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 29;
    p[i] = __float2bfloat16((static_cast<float>(x >> 40) / 16777216.0f - 0.5f) * scale);
  }
}

__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(int64_t ns) {
  const uint64_t end = globaltimer() + static_cast<uint64_t>(ns);
  while (globaltimer() < end) {
  }
}

__global__ void stream_kernel(uint4* p, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint4 v = p[i];
    v.x ^= 1u;
    p[i] = v;
  }
}

__global__ void softmax_kernel(__nv_bfloat16* p, int64_t cols, int64_t ld) {
  __nv_bfloat16* row = p + blockIdx.x * ld;
  __shared__ float red[32];
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, __bfloat162float(row[i]));
  m = block_max(m, red);
  float s = 0;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
    s += __expf(__bfloat162float(row[i]) - m);
  const float inv = 1.f / block_sum(s, red);
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    row[i] = __float2bfloat16(__expf(__bfloat162float(row[i]) - m) * inv);
  }
}

}  // namespace

void fill_random_bf16(__nv_bfloat16* p, int64_t n, uint64_t seed, float scale, cudaStream_t s) {
  fill_kernel<<<1024, 256, 0, s>>>(p, n, seed, scale);
  PS_LAUNCHED();
}

void spin(int64_t ns, cudaStream_t s) {
  spin_kernel<<<1, 32, 0, s>>>(ns);
  PS_LAUNCHED();
}

void stream_bytes(void* buf, int64_t buf_bytes, double bytes, cudaStream_t s) {
  // One pass reads and writes `span` bytes: the whole buffer, or less for a short gap.
  const int64_t span =
      std::max<int64_t>(std::min<int64_t>(buf_bytes, static_cast<int64_t>(bytes / 2)), 1 << 20) /
      16 * 16;
  const int64_t n = span / 16;
  for (double done = 0; done < bytes; done += 2.0 * static_cast<double>(span)) {
    stream_kernel<<<1056, 512, 0, s>>>(static_cast<uint4*>(buf), n);
    PS_LAUNCHED();
  }
}

void softmax_rows(__nv_bfloat16* p, int64_t rows, int64_t cols, int64_t ld, cudaStream_t s) {
  softmax_kernel<<<static_cast<unsigned>(rows), 512, 0, s>>>(p, cols, ld);
  PS_LAUNCHED();
}

}  // namespace powershape::kernels
