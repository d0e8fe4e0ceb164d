#pragma once
// What the fuzz targets share: the input as text, and the rule they check. A reader or builder
// given any bytes returns or throws std::runtime_error (powershape::Error is one) with a
// message; anything else escaping (a JSON library's type error, bad_alloc, a
// crash, a hang, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace powershape::fuzz {

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The input as JSON, or nothing when it does not parse (a parse error is the library's to find).
inline std::optional<nlohmann::json> json_of(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// Runs f; the reasons a reader may give are swallowed, everything else escapes to libFuzzer.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).empty()) throw std::logic_error("an error without a message");
  }
}

}  // namespace powershape::fuzz
