#pragma once
// The GPU backend lives in a plugin (libpowershape_gpu_backend.so, built with CUDA) that the CLI
// loads only when it runs on a GPU: a `powershape` that never touches the GPU (`mark`, `monitor`,
// `sim`) starts without loading the CUDA libraries, in about a millisecond rather than 0.1-0.3 s.
#include <cstddef>
#include <memory>
#include <string>

#include "powershape/experiment/backend.hpp"
#include "powershape/shape/filler.hpp"
#include "powershape/telemetry/sampler.hpp"

namespace powershape::experiment {

// Loads the plugin ($POWERSHAPE_GPU_BACKEND, else beside the running program, else in
// ../lib/powershape from it) and opens GPU 0 with a sampler of these options. Throws
// std::runtime_error with a one-line reason: no plugin (a build without CUDA), no driver, no GPU.
std::unique_ptr<Backend> open_gpu_backend(const telemetry::SamplerOptions& o);

// The plugin's one entry point: a GpuBackend, or null with the reason in `why`.
using OpenGpuBackendFn = Backend* (*)(const telemetry::SamplerOptions* o, char* why,
                                      std::size_t why_len);
inline constexpr const char* kOpenGpuBackendSymbol = "powershape_open_gpu_backend";

// The power floor's filler (kernels/gpu_filler.hpp) on the GPU of this NVML UUID (empty: CUDA's
// device 0), from the same plugin; the same errors.
std::unique_ptr<shape::Filler> open_gpu_filler(const std::string& uuid);
using OpenGpuFillerFn = shape::Filler* (*)(const char* uuid, char* why, std::size_t why_len);
inline constexpr const char* kOpenGpuFillerSymbol = "powershape_open_gpu_filler";

}  // namespace powershape::experiment
