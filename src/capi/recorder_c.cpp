// The recording half of the C API (include/powershape/powershape.h) over analysis::Recorder.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "capi_error.hpp"
#include "powershape/analysis/recorder.hpp"
#include "powershape/powershape.h"
#include "powershape/sim/sim_source.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/telemetry/mark.hpp"
#include "powershape/telemetry/region.hpp"
#include "powershape/util/printable.hpp"
#include "powershape/util/share_dir.hpp"
#include "powershape/workload/builders.hpp"

struct ps_recorder {
  std::unique_ptr<powershape::analysis::Recorder> r;
};

namespace {

// Under `powershape monitor` or `compare` (POWERSHAPE_CONTROL set), a region also goes to the
// enclosing recorder, which can then compare the program by its regions. Best effort: the
// in-process recording is what this call promises, so a closed FIFO is no error here. True when
// sent.
bool forward(const powershape::telemetry::Mark& m) {
  const char* path = std::getenv(powershape::telemetry::kControlEnv);
  if (path == nullptr || *path == '\0') return false;
  try {
    powershape::telemetry::send_mark(path, m);
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

using powershape::analysis::Summary;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Each field of powershape_abi.h's table is set below: a field added there fails here until it is.
#define PS_COUNT_FIELD(type, name, kind) +1
static_assert(0 PS_SUMMARY_FIELDS(PS_COUNT_FIELD) == 14,
              "ps_summary has a field to_c does not set");
#undef PS_COUNT_FIELD

ps_summary to_c(const Summary& s) {
  ps_summary c{};
  c.gpu = s.gpu;
  c.seconds = s.duration_s();
  const bool has_energy = s.energy.method != powershape::analysis::Energy::Method::kNone;
  c.energy_j = has_energy ? s.energy.energy_mj * 1e-3 : kNan;
  c.energy_method = s.energy.method == powershape::analysis::Energy::Method::kCounter
                        ? PS_ENERGY_COUNTER
                    : has_energy ? PS_ENERGY_POWER
                                 : PS_ENERGY_NONE;
  c.energy_counter_updates = s.energy.counter_updates;
  c.avg_power_w = s.avg_power_w.value_or(kNan);
  c.peak_power_w = s.peak_power_w.value_or(kNan);
  const bool clock = s.sm_clock_mhz.covered_ns > 0;
  c.sm_clock_mean_mhz = clock ? s.sm_clock_mhz.mean : kNan;
  c.sm_clock_p5_mhz = clock ? s.sm_clock_mhz.p5 : kNan;
  c.sm_clock_p50_mhz = clock ? s.sm_clock_mhz.p50 : kNan;
  c.sm_clock_p95_mhz = clock ? s.sm_clock_mhz.p95 : kNan;
  c.power_capped = s.power_capped_fraction().value_or(kNan);
  c.thermal_throttled = s.thermal_fraction().value_or(kNan);
  c.peak_temp_c = s.peak_temp_c ? static_cast<double>(*s.peak_temp_c) : kNan;
  return c;
}

int copy_out(const std::vector<Summary>& s, ps_summary* out, int n_out) {
  if (out != nullptr) {
    for (int i = 0; i < n_out && i < static_cast<int>(s.size()); ++i)
      out[i] = to_c(s[static_cast<std::size_t>(i)]);
  }
  return static_cast<int>(s.size());
}

}  // namespace

extern "C" {

const char* ps_version(void) { return powershape::util::version(); }

int64_t ps_now_ns(void) { return powershape::telemetry::steady_now_ns(); }

ps_recorder* ps_recorder_open(const char* source, const int* gpus, int n_gpus, double interval_ms) {
  return powershape::capi::guarded<ps_recorder*>(nullptr, [&] {
    if (source == nullptr) throw powershape::invalid_input("ps_recorder_open: source is NULL");
    if (!(interval_ms == 0 || (interval_ms >= 0.1 && interval_ms <= 60'000))) {
      throw powershape::invalid_input(
          "ps_recorder_open: interval_ms must be 0 (the default) or in [0.1, 60000], found " +
          powershape::util::printable(interval_ms));
    }
    if (n_gpus < 0 || (n_gpus > 0 && gpus == nullptr))
      throw powershape::invalid_input("ps_recorder_open: bad GPU list");
    powershape::telemetry::SamplerOptions o;
    if (interval_ms > 0)
      o.period = std::chrono::nanoseconds(static_cast<int64_t>(interval_ms * 1e6));
    auto src = powershape::sim::open_source(source, std::vector<int>(gpus, gpus + n_gpus));
    return new ps_recorder{std::make_unique<powershape::analysis::Recorder>(std::move(src), o)};
  });
}

int ps_recorder_gpu_count(const ps_recorder* r) {
  return powershape::capi::guarded<int>(-1, [&] {
    if (r == nullptr) throw powershape::invalid_input("ps_recorder_gpu_count: recorder is NULL");
    return static_cast<int>(r->r->devices().size());
  });
}

int ps_mark(int begin, const char* name, int64_t t_ns) {
  return powershape::capi::guarded<int>(-1, [&] {
    if (name == nullptr) throw powershape::invalid_input("ps_mark: name is NULL");
    if (auto why = powershape::telemetry::region_name_problem(name); !why.empty())
      throw powershape::invalid_input("name", why);
    return forward({begin != 0, t_ns != 0 ? t_ns : ps_now_ns(), name}) ? 1 : 0;
  });
}

int ps_region_begin(ps_recorder* r, const char* name, int64_t t_ns) {
  return powershape::capi::guarded<int>(-1, [&] {
    if (r == nullptr || name == nullptr)
      throw powershape::invalid_input("ps_region_begin: recorder or name is NULL");
    const int64_t t = t_ns != 0 ? t_ns : ps_now_ns();
    r->r->begin(name, t);
    forward({true, t, name});
    return 0;
  });
}

int ps_region_end(ps_recorder* r, const char* name, int64_t t_ns, ps_summary* out, int n_out) {
  return powershape::capi::guarded<int>(-1, [&] {
    if (r == nullptr || name == nullptr)
      throw powershape::invalid_input("ps_region_end: recorder or name is NULL");
    const int64_t t = t_ns != 0 ? t_ns : ps_now_ns();
    const int n = copy_out(r->r->end(name, t), out, n_out);
    forward({false, t, name});
    return n;
  });
}

int ps_region_summary(const ps_recorder* r, const char* name, ps_summary* out, int n_out) {
  return powershape::capi::guarded<int>(-1, [&] {
    if (r == nullptr || name == nullptr)
      throw powershape::invalid_input("ps_region_summary: recorder or name is NULL");
    auto s = r->r->last(name);
    if (s.empty())
      throw powershape::invalid_input(std::string("no region '") + name + "' has ended");
    return copy_out(s, out, n_out);
  });
}

int ps_cpu_zone(const ps_recorder* r, int i, char* name, int len) {
  return powershape::capi::guarded<int>(-1, [&] {
    if (r == nullptr) throw powershape::invalid_input("ps_cpu_zone: recorder is NULL");
    const auto& zones = r->r->cpu_zones();
    const int n = static_cast<int>(zones.size());
    if (name != nullptr) {
      if (i < 0 || i >= n || len < 1)
        throw powershape::invalid_input("ps_cpu_zone: zone " + std::to_string(i) + " of " +
                                        std::to_string(n) + ", or no room for its name");
      const std::string& z = zones[static_cast<std::size_t>(i)].name;
      const std::size_t k = std::min(z.size(), static_cast<std::size_t>(len - 1));
      std::memcpy(name, z.data(), k);
      name[k] = '\0';
    }
    return n;
  });
}

int ps_region_cpu_energy(const ps_recorder* r, const char* name, double* joules, int n) {
  return powershape::capi::guarded<int>(-1, [&] {
    if (r == nullptr || name == nullptr)
      throw powershape::invalid_input("ps_region_cpu_energy: recorder or name is NULL");
    if (r->r->last(name).empty())
      throw powershape::invalid_input(std::string("no region '") + name + "' has ended");
    const auto j = r->r->last_cpu_energy(name);
    for (int i = 0; joules != nullptr && i < n && i < static_cast<int>(j.size()); ++i)
      joules[i] = j[static_cast<std::size_t>(i)].value_or(kNan);
    return static_cast<int>(j.size());
  });
}

void ps_recorder_close(ps_recorder* r) { delete r; }

}  // extern "C"
