#pragma once
// A GPU's energy shared among the processes on it (dcgm-exporter#587, CodeCarbon#936 ask for it):
// NVML reports each process's share of the time a kernel ran (its SM utilization, sampled by the
// driver), never its power. So each window's energy (1 s by default) is split in proportion to
// the processes' SM percentages summed over the window's samples; a window with no process busy
// is "no process busy" (idle power, and work of processes NVML does not list). The windows' power
// integrals give the shape; the GPU's energy over the whole span (its counter where it has one)
// gives the total, so the parts add up to what `monitor` reports for the GPU.
//
// Limits, said wherever it is shown: a process with light kernels and one with heavy ones are
// charged alike for the same busy time; the idle floor is not split; processes time-sliced
// without MPS are charged by the slices each ran; under MPS or MIG the driver's samples may not
// tell processes apart; samples ~1/6 s apart leave short processes out.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "powershape/trace/trace.hpp"

namespace powershape::analysis {

inline constexpr int64_t kNoProcess = -1;       // the pid of "no process busy"
inline constexpr int64_t kOtherProcesses = -2;  // a tally's least-charged processes, folded

struct ProcessEnergy {
  int gpu = 0;
  int64_t pid = kNoProcess;
  std::string name;  // the last name seen for the pid; "" where unknown
  double joules = 0;
  double busy_s = 0;  // the seconds its SM percentages add up to (sm% x period)
  bool operator==(const ProcessEnergy&) const = default;
};

// Each (GPU, process)'s energy over [from_ns, to_ns), in windows of window_ns starting at
// from_ns (at most 2^20 of them: longer spans take longer windows), GPU by GPU then by pid
// (kNoProcess first); none for a GPU without energy, or without process samples in the span
// unless `also` names it (all of its energy then is "no process busy"). A GPU's parts add up to
// its energy over the span.
std::vector<ProcessEnergy> process_energy(const trace::Trace& t, int64_t from_ns, int64_t to_ns,
                                          int64_t window_ns = 1'000'000'000,
                                          const std::set<int>& also = {});

// As --json and the report's job table carry it: [{"gpu", "pid" (null for the folded rows),
// "name", "joules", "busy_s"}]; null for none (a source without process samples).
nlohmann::json to_json(const std::vector<ProcessEnergy>& v);

// Running totals for a recording that goes on (and forgets its past: monitor --keep): each call
// adds the whole windows since the last call's end, up to `until_ns` (at most the last sample), so
// a total only grows, as a Prometheus counter must; `to_the_end` adds the last part window too.
// A call reads only the recording's end since the last call. A GPU keeps its kMaxProcesses
// most-charged processes apart and folds the rest into kOtherProcesses.
class ProcessEnergyTally {
 public:
  explicit ProcessEnergyTally(int64_t window_ns = 1'000'000'000) : window_ns_(window_ns) {}
  void add(const trace::Trace& t, int64_t until_ns, bool to_the_end = false);
  // GPU by GPU, then by pid (kNoProcess first).
  std::vector<ProcessEnergy> totals() const;
  static constexpr std::size_t kMaxProcesses = 100;

 private:
  void fold();
  std::set<int> seen_gpus_;  // GPUs that have had process samples
  int64_t window_ns_;
  std::optional<int64_t> next_ns_;  // where the next window starts; none before the first sample
  std::map<std::pair<int, int64_t>, ProcessEnergy> totals_;
};

}  // namespace powershape::analysis
