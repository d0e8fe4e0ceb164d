#pragma once
// Text from a file or the command line, made safe to echo in a one-line error: bytes outside
// printable ASCII become \xNN, and a long text is cut to its first `max` bytes with its length
// said, so that a megabyte cell or a binary file never floods a terminal.
#include <cstddef>
#include <string>
#include <string_view>

namespace powershape::util {

std::string printable(std::string_view text, std::size_t max = 60);

// A number from outside, for an error: at most 6 significant digits ("1e+308", "0.1", "nan"),
// never the ~300 digits std::to_string gives a huge double.
std::string printable(double x);

}  // namespace powershape::util
