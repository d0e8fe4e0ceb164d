#include "powershape/util/lines.hpp"

#include "powershape/util/error.hpp"

namespace powershape::util {

bool read_line(std::istream& in, std::string& line, const std::string& name) {
  line.clear();
  std::streambuf* sb = in.rdbuf();
  if (sb == nullptr || !in.good()) {
    in.setstate(std::ios::failbit);
    return false;
  }
  for (;;) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(line.empty() ? std::ios::eofbit | std::ios::failbit : std::ios::eofbit);
      return !line.empty();
    }
    if (c == '\n') return true;
    if (c == '\r') {
      if (sb->sgetc() == '\n') sb->sbumpc();
      return true;
    }
    if (line.size() == kMostLine)
      throw invalid_input(name + ": a line longer than " + std::to_string(kMostLine >> 20) +
                          " MiB (not a text file?)");
    line.push_back(static_cast<char>(c));
  }
}

}  // namespace powershape::util
