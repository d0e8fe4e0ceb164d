#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "powershape/experiment/backend.hpp"

namespace powershape::cli {

// Opens the backend a --device option names: "gpu" (CUDA kernels + NVML), "sim" or "sim:PROFILE"
// (the simulator), or "" (the GPU where there is one, else the simulated h200). `why` says why
// the simulator was chosen when it was not asked for. Throws with a one-line reason.
std::unique_ptr<experiment::Backend> open_backend(const std::string& spec, uint64_t seed,
                                                  std::string* why);

// Adds the --device option open_backend reads to a subcommand.
void add_device_option(CLI::App* cmd, std::string& spec);

}  // namespace powershape::cli
