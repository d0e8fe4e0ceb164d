#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "powershape/util/error.hpp"

namespace powershape::util {

// "[json.exception.parse_error.101] parse error at ..." -> "parse error at ...", made printable.
std::string strip_json_code(const std::string& what);

// Writes `j` to `path`, indented, whole or not at all (util/atomic_file.hpp), text that is not
// UTF-8 as U+FFFD; throws naming the path when it cannot.
void write_json_file(const std::string& path, const nlohmann::json& j);

// Reads a JSON file; throws std::runtime_error in one line naming the path: "cannot read P",
// "P: a folder, not a JSON file", or "P: not JSON, parse error at line L, column C: ..." (the
// library's message without its exception code, text it quotes made printable).
nlohmann::json read_json_file(const std::string& path);

// Runs a reader over parsed JSON: its std::runtime_error, and a JSON type error it let escape,
// come back prefixed with the path ("P: phases[2].flops: ...").
template <class F>
auto read_as(const std::string& path, F&& reader) {
  const nlohmann::json j = read_json_file(path);
  try {
    return reader(j);
  } catch (const nlohmann::json::exception& e) {
    throw invalid_input(path + ": unexpected JSON type: " + strip_json_code(e.what()));
  } catch (const std::runtime_error& e) {
    throw invalid_input(path + ": " + e.what());
  }
}

}  // namespace powershape::util
