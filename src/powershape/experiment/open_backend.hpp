#pragma once
// A backend by name, as the CLI's --device and a C++ caller give it.
#include <cstdint>
#include <memory>
#include <string>

#include "powershape/experiment/backend.hpp"

namespace powershape::experiment {

// A device as --device and a C++ caller name it: "gpu", "sim" (the simulated h200),
// "sim:PROFILE", or "" (the GPU where there is one, else the simulated h200).
struct DeviceSpec {
  enum class Kind { kAuto, kGpu, kSim };
  Kind kind = Kind::kAuto;
  std::string profile;  // kSim: the profile's name or JSON path
};
// Anything else (a "sim:" without a profile too) is an Error whose subject is "device".
DeviceSpec parse_device(const std::string& spec);

// "gpu" (CUDA kernels + NVML, through the GPU plugin), "sim" or "sim:PROFILE" (the simulator), or
// "" (the GPU where there is one, else the simulated h200; `why` then says why the simulator was
// chosen). Anything else is an Error whose subject is "device".
std::unique_ptr<Backend> open_backend(const std::string& spec, uint64_t seed, std::string* why);

// A finetune:MODEL workload is a simulated device's (a model's whole training step): on a GPU,
// the error names how to chunk a real training loop instead.
void refuse_finetune_on_gpu(const std::string& workload, const Backend& backend);

}  // namespace powershape::experiment
