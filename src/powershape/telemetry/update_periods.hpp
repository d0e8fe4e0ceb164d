#pragma once
// Each GPU's update periods as a sampler measured them (how often the driver refreshes power,
// energy and the clock), with a run of GPUs alike (a node of one model) taken as one row: the same
// signals, each period within 10% or within a read period of the other's. Each GPU's driver
// updates on its own clock and a change is seen at the next read, so GPUs of one model measure
// periods up to a read period apart (93.9 against 110.0 ms for energy on the fake's 8 GPUs, read
// every 40 ms, on a loaded machine).
#include <cstddef>
#include <utility>
#include <vector>

#include "powershape/telemetry/device_info.hpp"
#include "powershape/telemetry/sampler.hpp"
#include "powershape/telemetry/signal.hpp"

namespace powershape::telemetry {

struct UpdatePeriods {
  int first_gpu = 0, last_gpu = 0;                   // NVML indices; equal for one GPU
  std::vector<std::pair<Signal, double>> period_ms;  // the first GPU's, signal by signal
};

// The rows, GPUs in the sampler's order; a GPU with no period measured has none.
std::vector<UpdatePeriods> update_periods(const Sampler& sampler,
                                          const std::vector<DeviceInfo>& devices);

// The runs [begin, end) of neighbours alike: each has as many periods as the first of its run,
// each within 10% of it or within either one's read period (`slack`, in the periods' unit).
std::vector<std::pair<std::size_t, std::size_t>> alike_runs(
    const std::vector<std::vector<double>>& periods, const std::vector<std::vector<double>>& slack);

}  // namespace powershape::telemetry
