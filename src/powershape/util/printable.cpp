#include "powershape/util/printable.hpp"

#include <cstdio>

namespace powershape::util {

std::string printable(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (text.size() > max) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace powershape::util
