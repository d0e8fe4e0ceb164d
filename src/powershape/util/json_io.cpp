#include "powershape/util/json_io.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <vector>

#include "powershape/util/atomic_file.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/input_file.hpp"
#include "powershape/util/printable.hpp"

namespace powershape::util {

void write_json_file(const std::string& path, const nlohmann::json& j) {
  write_file_atomic(path, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + '\n');
}

std::string strip_json_code(const std::string& what) {
  const auto close = what.find("] ");
  const bool coded = what.rfind("[json.exception.", 0) == 0 && close != std::string::npos;
  return printable(coded ? what.substr(close + 2) : what, 200);
}

nlohmann::json read_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw invalid_input(path + ": a folder, not a JSON file");
  }
  std::ifstream in;
  util::open_input(path, in);
  // A field given twice is refused, not taken at its last value (JSON leaves it undefined, and a
  // limit written twice is a mistake to name, not to guess at).
  std::vector<std::set<std::string>> objects;
  const auto once = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) objects.emplace_back();
    if (event == E::object_end && !objects.empty()) objects.pop_back();
    if (event == E::key && !objects.empty() &&
        !objects.back().insert(parsed.get<std::string>()).second)
      throw invalid_input(path + ": the field '" + printable(parsed.get<std::string>(), 80) +
                          "' is given twice in one object");
    return true;
  };
  try {
    return nlohmann::json::parse(in, once);
  } catch (const nlohmann::json::exception& e) {
    throw invalid_input(path + ": not JSON, " + strip_json_code(e.what()));
  }
}

}  // namespace powershape::util
