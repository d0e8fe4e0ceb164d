#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "powershape/experiment/open_backend.hpp"

namespace powershape::cli {

using experiment::open_backend;

// Adds the --device option open_backend reads to a subcommand.
void add_device_option(CLI::App* cmd, std::string& spec);

}  // namespace powershape::cli
