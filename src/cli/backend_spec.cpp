#include "backend_spec.hpp"

namespace powershape::cli {

void add_device_option(CLI::App* cmd, std::string& spec) {
  cmd->add_option("--device", spec,
                  "gpu, sim or sim:PROFILE (default: the GPU if there is one, else sim:h200)");
}

}  // namespace powershape::cli
