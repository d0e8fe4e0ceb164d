#pragma once
// What the CLI prints for an error: the library's message, with the flag that carried the value
// in front where the error names its subject and the subcommand that ran has that flag
// ("shape: expected ..." from the library, "--shape: expected ..." from the CLI).
#include <CLI/CLI.hpp>
#include <exception>
#include <string>

namespace powershape::cli {

std::string message_of(const CLI::App& app, const std::exception& e);

}  // namespace powershape::cli
