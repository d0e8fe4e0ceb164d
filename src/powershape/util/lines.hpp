#pragma once
// Lines of a text file whatever its line ends: "\n", "\r\n" or a lone "\r" (old Mac exports, some
// spreadsheet tools), which std::getline would read as one long line.
#include <istream>
#include <string>

namespace powershape::util {

// As std::getline: false when nothing is left; the stream's eof bit is set when the line ran to
// the end of the input without a line end (a cut-off last line).
bool read_line(std::istream& in, std::string& line);

}  // namespace powershape::util
