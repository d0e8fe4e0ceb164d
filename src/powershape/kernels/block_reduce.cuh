#pragma once
// A block's max or sum of one float a thread (blockDim.x a multiple of 32, at most 1024): warp
// shuffles, then the warps' results through `red` (32 floats of shared memory). Every thread gets
// the result, and `red` is free again when it returns.
namespace powershape::kernels {

__device__ inline float block_max(float v, float* red) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  v = -INFINITY;
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) v = fmaxf(v, red[w]);
  __syncthreads();
  return v;
}

__device__ inline float block_sum(float v, float* red) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  v = 0;
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) v += red[w];
  __syncthreads();
  return v;
}

}  // namespace powershape::kernels
