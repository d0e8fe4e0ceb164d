#pragma once
// Lines of a text file whatever its line ends: "\n", "\r\n" or a lone "\r" (old Mac exports, some
// spreadsheet tools), which std::getline would read as one long line.
#include <cstddef>
#include <istream>
#include <string>

namespace powershape::util {

// As std::getline: false when nothing is left; the stream's eof bit is set when the line ran to
// the end of the input without a line end (a cut-off last line). A line longer than kMostLine
// (a binary file, a device) is refused with a std::runtime_error naming `name`, before it can
// take the memory.
inline constexpr std::size_t kMostLine = std::size_t{16} << 20;
bool read_line(std::istream& in, std::string& line, const std::string& name);

}  // namespace powershape::util
