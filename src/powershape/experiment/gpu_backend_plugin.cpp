// The entry point of libpowershape_gpu_backend.so (experiment/gpu_plugin.hpp).
#include <cstdio>
#include <exception>
#include <type_traits>

#include "powershape/experiment/gpu_backend.hpp"
#include "powershape/experiment/gpu_plugin.hpp"
#include "powershape/kernels/gpu_filler.hpp"

extern "C" powershape::experiment::Backend* powershape_open_gpu_backend(
    const powershape::telemetry::SamplerOptions* o, char* why, std::size_t why_len) {
  static_assert(std::is_same_v<decltype(&powershape_open_gpu_backend),
                               powershape::experiment::OpenGpuBackendFn>);
  try {
    return new powershape::experiment::GpuBackend(*o);
  } catch (const std::exception& e) {
    std::snprintf(why, why_len, "%s", e.what());
    return nullptr;
  }
}

extern "C" powershape::shape::Filler* powershape_open_gpu_filler(const char* uuid, char* why,
                                                                 std::size_t why_len) {
  static_assert(std::is_same_v<decltype(&powershape_open_gpu_filler),
                               powershape::experiment::OpenGpuFillerFn>);
  try {
    return powershape::kernels::open_gpu_filler(uuid).release();
  } catch (const std::exception& e) {
    std::snprintf(why, why_len, "%s", e.what());
    return nullptr;
  }
}
