#include "subcommands.hpp"

namespace powershape::cli {

int& exit_code() {
  static int code = 0;
  return code;
}

}  // namespace powershape::cli
