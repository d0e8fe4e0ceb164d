#pragma once
// A tensor times a factor that lives on the device, for gradients made before their incoming
// gradient is known: the kernel reads the factor itself, so the host never waits for it.
#include <cuda_runtime.h>

#include <cstdint>

namespace powershape::kernels {

// data[i] *= *factor for `count` bf16 (fp32 false) or fp32 values; nothing is read or written
// when *factor is 1.
void scale_unless_one(void* data, int64_t count, bool fp32, const float* factor,
                      cudaStream_t stream);

}  // namespace powershape::kernels
