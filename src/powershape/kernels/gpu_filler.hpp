#pragma once
// The power floor's filler on a GPU (shape/filler.hpp): a thread of its own runs bf16 products
// (4096 x 4096 x 4096, cuBLASLt) for `intensity` of each 2 ms period on a stream of the least
// priority, and leaves the GPU alone for the rest, so that the GPU's mean power moves between its
// idle and its products' power with the intensity (bench/floor_power.py measures the curve). It
// waits for its products by blocking, not by spinning a core. Host API: no CUDA headers.
#include <memory>
#include <string>

#include "powershape/shape/filler.hpp"

namespace powershape::kernels {

// Opens the filler on the GPU whose UUID (NVML's "GPU-...") is `uuid`, or on CUDA's device 0 when
// it is empty; allocates its 96 MiB and times its product. Throws unsupported for a UUID no CUDA
// device has, device_error for a CUDA failure.
std::unique_ptr<shape::Filler> open_gpu_filler(const std::string& uuid);

}  // namespace powershape::kernels
