#include "powershape/util/json_out.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace powershape::util {

void write_json_file(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  out << j.dump(1) << '\n';
  out.close();  // the last of it is written here: a full disk shows now, not never
  if (!out) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace powershape::util
