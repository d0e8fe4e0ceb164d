#pragma once
// `-o -`, `--json -`: an output named "-" is standard output. The program's own table then goes to
// standard error so the data stays clean; data_stdout() is where "-" writes.
#include <cstdio>
#include <string>

namespace powershape::util {

// True for the path that means standard output.
inline bool is_stdout(const std::string& path) { return path == "-"; }

// Makes fd 1 a copy of fd 2 (everything printed goes to the terminal or log) and keeps the real
// standard output for the data, once; called by main when an output option names "-".
void send_table_to_stderr();

// The stream "-" writes to: the real standard output (kept aside by send_table_to_stderr).
std::FILE* data_stdout();

// Writes text to data_stdout() whole, or throws naming "standard output".
void write_stdout(const std::string& text);

}  // namespace powershape::util
