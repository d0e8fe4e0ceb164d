#include "subcommands.hpp"

namespace powershape::cli {

int& exit_code() {
  static int code = 0;
  return code;
}

int64_t& started_ns() {
  static int64_t ns = 0;
  return ns;
}

}  // namespace powershape::cli
