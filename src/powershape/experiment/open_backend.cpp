#include "powershape/experiment/open_backend.hpp"

#include "powershape/experiment/gpu_plugin.hpp"
#include "powershape/experiment/sim_backend.hpp"
#include "powershape/telemetry/nvml_api.hpp"
#include "powershape/util/error.hpp"

namespace powershape::experiment {
namespace {

std::unique_ptr<Backend> open_sim(const std::string& profile, uint64_t seed) {
  sim::DeviceOptions o;
  o.seed = seed;
  o.step_s = 1e-4;
  return std::make_unique<SimBackend>(sim::load_profile(profile), o);
}

std::unique_ptr<Backend> open_gpu() { return open_gpu_backend(measurement_sampler_options()); }

}  // namespace

DeviceSpec parse_device(const std::string& spec) {
  if (spec.empty()) return {};
  if (spec == "gpu") return {DeviceSpec::Kind::kGpu, ""};
  if (spec == "sim") return {DeviceSpec::Kind::kSim, "h200"};
  if (spec.rfind("sim:", 0) == 0 && spec.size() > 4)
    return {DeviceSpec::Kind::kSim, spec.substr(4)};
  throw invalid_input("device", "expected gpu, sim or sim:PROFILE, found '" + spec + "'");
}

std::unique_ptr<Backend> open_backend(const std::string& spec, uint64_t seed, std::string* why) {
  const DeviceSpec d = parse_device(spec);
  if (d.kind == DeviceSpec::Kind::kSim) return open_sim(d.profile, seed);
  if (d.kind == DeviceSpec::Kind::kGpu) return open_gpu();
  try {
    // No driver is the reason a user without a GPU should read, before what this build lacks.
    { const telemetry::nvml::Library driver; }
    return open_gpu();
  } catch (const std::runtime_error& e) {
    if (why != nullptr) *why = e.what();
    return open_sim("h200", seed);
  }
}

void refuse_finetune_on_gpu(const std::string& workload, const Backend& backend) {
  if (workload.rfind("finetune:", 0) == 0 && !backend.simulated())
    throw invalid_input("workload", workload +
                                        " is a simulated device's (sim:NAME); on a GPU, chunk "
                                        "your own training with `powershape tune ... -- COMMAND`");
}

}  // namespace powershape::experiment
