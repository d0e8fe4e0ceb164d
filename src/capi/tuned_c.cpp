// ps_lmhead_tuned_chunks: the chunk count `powershape tune` cached for a shape on a GPU as it is
// now (its name, driver and power limit, read through NVML); apart from the op's ABI, which needs
// neither NVML nor the cache.
#include "capi_error.hpp"
#include "powershape/experiment/tune_cache.hpp"
#include "powershape/powershape.h"
#include "powershape/telemetry/nvml_source.hpp"
#include "powershape/trace/json_codec.hpp"
#include "powershape/workload/workload.hpp"

extern "C" {

int ps_lmhead_tuned_chunks(int64_t n, int64_t d, int64_t v, int forward_only, int exp_in_product,
                           const char* objective, int gpu) {
  return powershape::capi::guarded<int>(-1, [&]() -> int {
    namespace e = powershape::experiment;
    if (n < 1 || d < 1 || v < 1)
      throw powershape::invalid_input("lmhead: N, D and V must be positive");
    if (objective == nullptr)
      throw powershape::invalid_input("tuned chunks: the objective is NULL");
    powershape::telemetry::NvmlSource nvml({gpu});
    const nlohmann::json device = {{"device", powershape::trace::to_json(nvml.devices().at(0))}};
    powershape::workload::LmHead l{n, d, v, forward_only == 0};
    l.exp_in_product = exp_in_product != 0;
    const powershape::workload::Workload w{l, 1};
    const std::string key = e::tune_key(device, e::tune_workload_name(w), objective);
    return e::cached_chunks(key).value_or(0);
  });
}

}  // extern "C"
