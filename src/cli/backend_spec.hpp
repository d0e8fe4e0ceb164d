#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "powershape/experiment/open_backend.hpp"

namespace powershape::cli {

using experiment::open_backend;

// Adds the --device option open_backend reads to a subcommand.
void add_device_option(CLI::App* cmd, std::string& spec);

// A finetune:MODEL workload is a simulated device's (a model's whole training step): on a GPU,
// the error names how to chunk a real training loop instead.
void refuse_finetune_on_gpu(const std::string& workload, const experiment::Backend& backend);

}  // namespace powershape::cli
