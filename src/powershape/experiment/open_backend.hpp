#pragma once
// A backend by name, as the CLI's --device and a C++ caller give it.
#include <cstdint>
#include <memory>
#include <string>

#include "powershape/experiment/backend.hpp"

namespace powershape::experiment {

// "gpu" (CUDA kernels + NVML, through the GPU plugin), "sim" or "sim:PROFILE" (the simulator), or
// "" (the GPU where there is one, else the simulated h200; `why` then says why the simulator was
// chosen). Anything else is an Error whose subject is "device".
std::unique_ptr<Backend> open_backend(const std::string& spec, uint64_t seed, std::string* why);

}  // namespace powershape::experiment
