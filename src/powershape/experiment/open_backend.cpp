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

std::unique_ptr<Backend> open_backend(const std::string& spec, uint64_t seed, std::string* why) {
  if (spec == "sim") return open_sim("h200", seed);
  if (spec.rfind("sim:", 0) == 0) return open_sim(spec.substr(4), seed);
  if (spec == "gpu") return open_gpu();
  if (!spec.empty())
    throw invalid_input("device", "expected gpu, sim or sim:PROFILE, found '" + spec + "'");
  try {
    // No driver is the reason a user without a GPU should read, before what this build lacks.
    { const telemetry::nvml::Library driver; }
    return open_gpu();
  } catch (const std::runtime_error& e) {
    if (why != nullptr) *why = e.what();
    return open_sim("h200", seed);
  }
}

}  // namespace powershape::experiment
