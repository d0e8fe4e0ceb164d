#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "powershape/telemetry/counter_unwrap.hpp"
#include "powershape/telemetry/nvml_api.hpp"
#include "powershape/telemetry/source.hpp"

namespace powershape::telemetry {

// NVIDIA GPUs through NVML, loaded at run time. A signal found unsupported at start is not asked
// for again; a GPU reported lost reads kGpuLost, and is asked once a second whether it is back.
// The driver's power buffer is harvested in time order; samples it dates in the future or at 0
// are dropped (said once). Different GPUs may be polled from different threads.
class NvmlSource final : public Source {
 public:
  // `gpus`: the NVML indices to watch; empty means all. Throws std::runtime_error with a one-line
  // reason when there is no driver or an index does not exist.
  explicit NvmlSource(const std::vector<int>& gpus = {},
                      const std::string& library = "libnvidia-ml.so.1");
  std::string describe() const override;
  const std::vector<DeviceInfo>& devices() const override { return infos_; }
  Sample poll(int gpu, const SignalSet& which) override;
  std::vector<Sample> drain(int gpu) override;
  std::vector<Event> take_events() override;
  std::vector<ProcessSample> process_samples(int gpu) override;
  std::array<int64_t, kSignalCount> read_cost_ns(int gpu) const override;
  int64_t buffer_ns(int gpu) const override;

 private:
  struct Gpu {
    nvml::Device handle = nullptr;
    bool lost = false;
    int64_t retry_ns = 0;  // when a lost GPU is asked again
    CounterUnwrap energy{spec(Signal::kPowerUsage).most};
    bool said_beyond = false;  // a reading beyond any GPU was said
    unsigned long long last_driver_sample_us = 0;
    int64_t buffer_ns = 0;          // how far back the driver's power buffer reached at start
    int64_t sample_spacing_us = 0;  // between its samples; 0: unknown
    bool drained = false;           // last_driver_sample_us is a sample's time
    unsigned long long last_process_sample_us = 0;
    bool processes_unsupported = false;
    std::map<unsigned, std::string> process_names;  // by pid, read once
    std::array<int64_t, kSignalCount> cost_ns{};
  };
  void probe(int gpu);
  void physical(int gpu, Gpu& g, Sample& s);
  Status status_of(nvml::Return r, Gpu& g) const;
  DeviceInfo read_info(int nvml_index, Gpu& g);
  int64_t buffer_depth_ns(Gpu& g, unsigned count);
  // Now on the driver's sample clock (wall-clock microseconds).
  unsigned long long realtime_now_us() const;
  void read_fields(Gpu& g, const DeviceInfo& info, const SignalSet& which, Sample& s);

  std::unique_ptr<nvml::Library> lib_;
  std::vector<Gpu> gpus_;
  std::vector<DeviceInfo> infos_;
  int64_t realtime_minus_steady_ns_ = 0;
  void event(int64_t t_ns, int gpu, std::string what);
  bool back_from_lost(int gpu, Gpu& g, int64_t now_ns);

  std::mutex events_mu_;  // guards events_
  std::vector<Event> events_;
  std::atomic<bool> said_odd_samples_{false};
};

}  // namespace powershape::telemetry
