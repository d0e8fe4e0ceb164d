#include "powershape/util/json_out.hpp"

#include <fstream>
#include <stdexcept>

namespace powershape::util {

void write_json_file(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  out << j.dump(1) << '\n';
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace powershape::util
