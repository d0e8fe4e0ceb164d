#include "powershape/util/json_io.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

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
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw invalid_input(path + ": not JSON, " + strip_json_code(e.what()));
  }
}

}  // namespace powershape::util
