// The entry point of libpowershape_gpu_backend.so (experiment/gpu_plugin.hpp).
#include <cstdio>
#include <exception>
#include <type_traits>

#include "powershape/experiment/gpu_backend.hpp"
#include "powershape/experiment/gpu_plugin.hpp"

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
