#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/kind_on_gpu.hpp"
#include "powershape/kernels/synthetic.cuh"
#include "powershape/util/error.hpp"

namespace powershape::kernels {

DeviceBuffer::DeviceBuffer(int64_t bytes) {
  if (cudaMalloc(&p_, static_cast<std::size_t>(bytes)) != cudaSuccess) {
    (void)cudaGetLastError();  // the failed allocation is not an error of a later call
    std::size_t free = 0, total = 0;
    const std::string left = cudaMemGetInfo(&free, &total) == cudaSuccess
                                 ? " (" + std::to_string(free >> 20) + " MiB free)"
                                 : "";
    throw device_error("cannot allocate " + std::to_string(bytes >> 20) + " MiB on the GPU" + left);
  }
}

DeviceBuffer::~DeviceBuffer() { cudaFree(p_); }

void* DeviceMemory::add(int64_t bytes) {
  buffers_.emplace_back(bytes);
  return buffers_.back().get();
}

__nv_bfloat16* DeviceMemory::random_bf16(int64_t elements, uint64_t seed, float scale) {
  __nv_bfloat16* p = bf16(elements);
  fill_random_bf16(p, elements, seed, scale, nullptr);
  return p;
}

std::vector<float> to_host(const __nv_bfloat16* p, int64_t n) {
  std::vector<__nv_bfloat16> raw(static_cast<std::size_t>(n));
  PS_CUDA(cudaMemcpy(raw.data(), p, raw.size() * 2, cudaMemcpyDeviceToHost));
  std::vector<float> out(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) out[i] = __bfloat162float(raw[i]);
  return out;
}

}  // namespace powershape::kernels
