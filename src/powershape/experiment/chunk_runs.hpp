#pragma once
// repro's and tune's one call each: a workload's chunk counts on a device, measured in shuffled
// rounds (repro) or raced with a model's help (tune). What each says before it measures (the
// device, the warm-up, the design) goes to `say` a line at a time; the printers follow the results.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "powershape/experiment/backend.hpp"
#include "powershape/experiment/engine.hpp"
#include "powershape/experiment/tune.hpp"
#include "powershape/experiment/tune_cache.hpp"
#include "powershape/workload/kind.hpp"
#include "powershape/workload/plan.hpp"

namespace powershape::experiment {

using Say = std::function<void(const std::string&)>;

// A workload's chunk counts set on a device: its options checked first, then the device opened
// (gpu, sim, sim:PROFILE; empty: the GPU where there is one, else a simulated H200). A fine-tune is
// refused on a GPU.
struct WorkloadOnDevice {
  std::unique_ptr<Backend> backend;
  std::vector<workload::Plan> plans;
  bool finetune = false;
  std::string no_gpu;  // why a simulated device stands in for the GPU asked for; empty: none
  // "`who` on DEVICE", and why no GPU where a simulated device stands in.
  std::string header(const std::string& who) const;
};
WorkloadOnDevice open_workload(const std::string& device, uint64_t seed, workload::WorkloadArgs w);

struct ReproRequest {
  workload::WorkloadArgs workload;
  std::string device;
  Design design;
  // Unless chosen, a simulated device calls a difference within what its chunk ratios are known
  // to be worth "within"; `min_effect_hint` says how to choose (it follows that line).
  bool min_effect_chosen = false;
  std::string min_effect_hint;
  Say say;
};
struct ReproRun {
  Result result;
  std::string workload;  // the first configuration's name
  // On a simulated device, what a GPU of its profile (h200 for sim) measured of the same question
  // is printed beside: the profile, the workload's kind name and its kind; empty on a GPU.
  std::string reference_profile, kind_name, kind;
};
ReproRun repro(ReproRequest q);
void print_repro(std::FILE* out, const ReproRun& r);

struct TuneRequest {
  workload::WorkloadArgs workload;
  std::string device;
  TuneOptions options;  // its objective, slowdown and effect bounds are set from the three below
  std::string objective = "time";
  double max_slowdown = -1;  // a fraction; -1: any
  double min_effect = 0.002;
  // The profile the model simulates; empty: a simulated device's own, none on a GPU (the
  // simulator does not yet predict the chunk effect there: on the H200 its model dropped 8 chunks
  // at 131072x896x151936, which a sweep finds 1.4% faster).
  std::string model;
  bool no_model = false;
  bool cache = true;  // store the choice (tune_cache.hpp); a fine-tune's never is
  Say say;
};
struct TuneRun {
  TuneResult result;
  nlohmann::json device;
  std::optional<CachedChoice> cached;
  bool finetune = false, cache = true;  // cache: as asked
};
// Throws invalid_input("chunks") for fewer than two chunk counts.
TuneRun tune_workload(TuneRequest q);
// The race's result, then what was cached (or why not).
void print_tune_run(std::FILE* out, const TuneRun& r);
nlohmann::json to_json(const TuneRun& r);

}  // namespace powershape::experiment
