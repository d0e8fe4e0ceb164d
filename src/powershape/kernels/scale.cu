#include <cuda_bf16.h>

#include <algorithm>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/multiprocessors.hpp"
#include "powershape/kernels/scale.cuh"

namespace powershape::kernels {
namespace {

template <class T>
__global__ void scale_kernel(T* data, int64_t count, const float* factor) {
  const float f = *factor;
  if (f == 1.f) return;  // every block returns at once: the launch is all it costs
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if constexpr (sizeof(T) == 4) {
      data[i] *= f;
    } else {
      data[i] = __float2bfloat16(__bfloat162float(data[i]) * f);
    }
  }
}

}  // namespace

void scale_unless_one(void* data, int64_t count, bool fp32, const float* factor,
                      cudaStream_t stream) {
  if (count <= 0) return;
  // Enough blocks to fill the GPU several times over; the loop strides over the rest.
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>((count + 255) / 256, int64_t{8} * multiprocessors()));
  if (fp32) {
    scale_kernel<<<blocks, 256, 0, stream>>>(static_cast<float*>(data), count, factor);
  } else {
    scale_kernel<<<blocks, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, factor);
  }
  PS_LAUNCHED();
}

}  // namespace powershape::kernels
