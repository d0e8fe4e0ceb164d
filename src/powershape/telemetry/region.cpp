#include "powershape/telemetry/region.hpp"

namespace powershape::telemetry {
namespace {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = at(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if ((at(i + k) & 0xc0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::string region_name_problem(const std::string& name) {
  if (name.empty()) return "a region needs a name";
  if (name.size() > 200)
    return "a region name is at most 200 bytes, found " + std::to_string(name.size());
  for (std::size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f)
      return "a region name has no control characters (newlines, tabs, ...)";
    const std::size_t n = utf8_length(name, i);
    if (n == 0) return "a region name is UTF-8 text";
    i += n;
  }
  return {};
}

}  // namespace powershape::telemetry
