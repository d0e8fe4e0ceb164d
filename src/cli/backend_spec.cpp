#include "backend_spec.hpp"

#include <stdexcept>

#include "powershape/util/error.hpp"

namespace powershape::cli {

void add_device_option(CLI::App* cmd, std::string& spec) {
  cmd->add_option("--device", spec,
                  "gpu, sim or sim:PROFILE (default: the GPU if there is one, else sim:h200)");
}

void refuse_finetune_on_gpu(const std::string& workload, const experiment::Backend& backend) {
  if (workload.rfind("finetune:", 0) == 0 && !backend.simulated())
    throw invalid_input(
        "--workload " + workload +
        ": a simulated device's (--device sim:NAME); on a GPU, chunk your own training with "
        "`powershape tune ... -- COMMAND`");
}

}  // namespace powershape::cli
