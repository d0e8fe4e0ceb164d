#pragma once
// What the CLI prints for an error: the library's message, with the flag that carried the value
// in front where the error names its subject and the subcommand that ran has that flag
// ("shape: expected ..." from the library, "--shape: expected ..." from the CLI), and the exit code
// its kind gives.
#include <CLI/CLI.hpp>
#include <exception>
#include <string>

namespace powershape::cli {

std::string message_of(const CLI::App& app, const std::exception& e);

// docs/cli.md's codes, nvidia-smi's where it has one: 2 a wrong input (an option's value, a file,
// a shape: the caller can fix it), 3 what this machine lacks (no driver, GPU or backend), 1 a
// device, driver or system call that failed.
int exit_code_of(const std::exception& e);

// A warning from the library about one of a run's outputs ("json", "report"), as that output's
// option ("powershape: --json: ..."); a note of no output ("") as it is.
void say_output(const std::string& output, const std::string& what);

}  // namespace powershape::cli
