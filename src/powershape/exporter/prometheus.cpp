#include "powershape/exporter/prometheus.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "powershape/analysis/grid_spec.hpp"
#include "powershape/analysis/power_input.hpp"
#include "powershape/analysis/summary.hpp"
#include "powershape/analysis/swing.hpp"
#include "powershape/util/error.hpp"

namespace powershape::exporter {

using analysis::summarize;
using analysis::Summary;
namespace {

using telemetry::Signal;

// A label value escaped as the exposition format asks: backslash, double quote and newline.
std::string escaped(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

struct Family {
  const char* name;
  const char* type;
  const char* help;
};

// The node's swings over the last kSwingWindowNs against the shipped grid spec's windows and
// bands (docs/grid.md); nothing while the recording holds too little of them.
void swing_gauges(std::ostream& out, const trace::Trace& t, int64_t to_ns,
                  const std::string& host) {
  analysis::Swing s;
  analysis::GridSpec spec;
  try {
    spec = analysis::load_grid_spec(analysis::kDefaultGridSpec);
    const auto in = analysis::trace_power(t, to_ns - kSwingWindowNs, to_ns, 0);
    s = analysis::analyse_swing(in.power, spec, analysis::swing_options(spec));
  } catch (const Error&) {
    return;  // a recording's first seconds, a trace without power
  }
  const std::string window = ",over_s=\"" + std::to_string(kSwingWindowNs / 1'000'000'000) + "\"";
  out << "# HELP powershape_node_power_ramp_watts_per_second The node's largest power ramp in the "
         "last minute: the mean over window_s against the window_s before (in W/s).\n"
      << "# TYPE powershape_node_power_ramp_watts_per_second gauge\n";
  for (const auto& [dir, v] :
       {std::pair{"up", s.ramp.up_max_w_per_s}, {"down", s.ramp.down_max_w_per_s}})
    out << "powershape_node_power_ramp_watts_per_second{" << host << window << ",direction=\""
        << dir << "\",window_s=\"" << s.ramp_window_s << "\"} " << v << "\n";
  out << "# HELP powershape_node_power_range_watts The node's largest power range inside window_s "
         "in the last minute (in W).\n# TYPE powershape_node_power_range_watts gauge\n"
      << "powershape_node_power_range_watts{" << host << window << ",window_s=\""
      << s.range_window_s << "\"} " << s.range_w << "\n";
  if (s.period_s > 0)
    out << "# HELP powershape_node_power_period_seconds The period the node's power repeats with "
           "in the last minute (a training step).\n"
        << "# TYPE powershape_node_power_period_seconds gauge\n"
        << "powershape_node_power_period_seconds{" << host << window << "} " << s.period_s << "\n";
  if (s.bands.empty()) return;
  out << "# HELP powershape_node_power_band_share Share of the node's power variation in the last "
         "minute inside each band of the grid spec.\n"
      << "# TYPE powershape_node_power_band_share gauge\n";
  for (const auto& b : s.bands) {
    out << "powershape_node_power_band_share{" << host << window << ",lo_hz=\"" << b.band.lo_hz
        << "\",hi_hz=\"" << b.band.hi_hz << "\"";
    if (b.band.max_share) out << ",max_share=\"" << *b.band.max_share << "\"";
    out << "} " << b.share << "\n";
  }
  out << "# HELP powershape_node_power_band_rms_watts RMS of the node's power variation in the "
         "last minute inside each band of the grid spec (in W).\n"
      << "# TYPE powershape_node_power_band_rms_watts gauge\n";
  for (const auto& b : s.bands)
    out << "powershape_node_power_band_rms_watts{" << host << window << ",lo_hz=\"" << b.band.lo_hz
        << "\",hi_hz=\"" << b.band.hi_hz << "\"} " << b.rms_w << "\n";
}

}  // namespace

std::string prometheus_text(const trace::Trace& t, int64_t from_ns, int64_t to_ns,
                            std::size_t* names_left_out, std::string hostname) {
  if (hostname.empty()) {
    char name[256] = "";
    if (gethostname(name, sizeof name - 1) == 0) hostname = name;
  }
  const std::string host = "Hostname=\"" + escaped(hostname) + "\"";
  // The latest reading of each signal of each GPU.
  std::map<int, std::map<Signal, int64_t>> latest;
  for (const auto& s : t.samples) {
    for (std::size_t i = 0; i < telemetry::kSignalCount; ++i) {
      if (s.readings[i].ok()) latest[s.gpu][static_cast<Signal>(i)] = s.readings[i].value;
    }
  }
  std::map<int, std::string> labels;
  for (const auto& d : t.devices) {
    labels[d.index] = "gpu=\"" + std::to_string(d.index) + "\",UUID=\"" + escaped(d.uuid) +
                      "\",device=\"nvidia" + std::to_string(d.index) + "\",modelName=\"" +
                      escaped(d.name) + "\"," + host;
  }
  auto label = [&](int gpu) {
    auto it = labels.find(gpu);
    return it != labels.end() ? it->second : "gpu=\"" + std::to_string(gpu) + "\"," + host;
  };
  std::ostringstream out;
  out.precision(10);
  auto family = [&](const Family& f) {
    out << "# HELP " << f.name << " " << f.help << "\n# TYPE " << f.name << " " << f.type << "\n";
  };
  struct Direct {
    Family f;
    Signal s;
    double scale;
  };
  const Direct direct[] = {
      {{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."}, Signal::kPowerUsage, 1e-3},
      {{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
        "Total energy consumption since boot (in mJ)."},
       Signal::kEnergy,
       1},
      {{"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."}, Signal::kSmClock, 1},
      {{"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."},
       Signal::kMemClock,
       1},
      {{"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."}, Signal::kGpuTemp, 1},
      {{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."}, Signal::kUtilGpu, 1},
      {{"powershape_power_instant_watts", "gauge", "Instantaneous power draw (in W)."},
       Signal::kPowerInstant,
       1e-3},
  };
  for (const auto& d : direct) {
    bool any = false;
    for (const auto& [gpu, v] : latest) any = any || v.count(d.s) > 0;
    if (!any) continue;
    family(d.f);
    for (const auto& [gpu, v] : latest) {
      auto it = v.find(d.s);
      if (it != v.end())
        out << d.f.name << "{" << label(gpu) << "} " << static_cast<double>(it->second) * d.scale
            << "\n";
    }
  }
  // Each GPU's power limit beside its power (dcgm-exporter#719), as DCGM names the fields.
  for (const auto& [name, help, field] :
       {std::tuple{"DCGM_FI_DEV_POWER_MGMT_LIMIT", "Power management limit (in W).",
                   &telemetry::DeviceInfo::power_limit_mw},
        std::tuple{"DCGM_FI_DEV_ENFORCED_POWER_LIMIT",
                   "Enforced power limit, the least of every limit set (in W).",
                   &telemetry::DeviceInfo::enforced_power_limit_mw}}) {
    bool any = false;
    for (const auto& d : t.devices) {
      if (!(d.*field).ok()) continue;
      if (!any) family({name, "gauge", help});
      any = true;
      out << name << "{" << label(d.index) << "} " << static_cast<double>((d.*field).value) * 1e-3
          << "\n";
    }
  }
  // The node: what its GPUs draw and have used together (GPUs without the signal left out).
  double node_w = 0, node_mj = 0;
  bool any_w = false, any_mj = false;
  for (const auto& [gpu, v] : latest) {
    if (auto it = v.find(Signal::kPowerUsage); it != v.end()) {
      node_w += static_cast<double>(it->second) * 1e-3;
      any_w = true;
    }
    if (auto it = v.find(Signal::kEnergy); it != v.end()) {
      node_mj += static_cast<double>(it->second);
      any_mj = true;
    }
  }
  if (any_w) {
    family({"powershape_node_power_watts", "gauge", "Power draw of every GPU of the node (in W)."});
    out << "powershape_node_power_watts{" << host << ",gpus=\"" << latest.size() << "\"} " << node_w
        << "\n";
  }
  if (any_mj) {
    family({"powershape_node_energy_joules_total", "counter",
            "Energy every GPU of the node has used since boot (in J)."});
    out << "powershape_node_energy_joules_total{" << host << ",gpus=\"" << latest.size() << "\"} "
        << node_mj * 1e-3 << "\n";
  }
  swing_gauges(out, t, to_ns, host);
  // Shares over the window, from the summary of each GPU.
  std::map<int, Summary> window;
  for (const auto& [gpu, v] : latest) window[gpu] = summarize(t, gpu, "window", from_ns, to_ns);
  family({"powershape_power_capped_fraction", "gauge",
          "Fraction of the last interval held by the power cap."});
  for (const auto& [gpu, s] : window) {
    if (auto f = s.power_capped_fraction())
      out << "powershape_power_capped_fraction{" << label(gpu) << "} " << *f << "\n";
  }
  family({"powershape_thermal_throttled_fraction", "gauge",
          "Fraction of the last interval thermally throttled."});
  for (const auto& [gpu, s] : window) {
    if (auto f = s.thermal_fraction())
      out << "powershape_thermal_throttled_fraction{" << label(gpu) << "} " << *f << "\n";
  }
  family({"powershape_clock_event_fraction", "gauge",
          "Fraction of the last interval with each clock-event reason set."});
  for (const auto& [gpu, s] : window) {
    for (const auto& [reason, f] : s.reason_fraction)
      out << "powershape_clock_event_fraction{" << label(gpu) << ",clock_event=\"" << reason
          << "\"} " << f << "\n";
  }
  // The last region of each name, per GPU it covers: the names that ended most recently, each
  // summarised once for both families.
  std::map<std::string, const telemetry::Region*> last;
  std::vector<const telemetry::Region*> recent;  // newest first, one per name
  for (auto it = t.regions.rbegin(); it != t.regions.rend(); ++it) {
    if (last.count(it->name) != 0) continue;
    last[it->name] = &*it;
    recent.push_back(&*it);
  }
  if (names_left_out != nullptr)
    *names_left_out = recent.size() > kMaxRegionNames ? recent.size() - kMaxRegionNames : 0;
  if (recent.size() > kMaxRegionNames) recent.resize(kMaxRegionNames);
  std::sort(recent.begin(), recent.end(),
            [](const auto* a, const auto* b) { return a->name < b->name; });
  struct Row {
    int gpu;
    const std::string* name;
    double energy_j, seconds;
  };
  std::vector<Row> rows;
  for (const auto* r : recent) {
    for (const auto& [gpu, v] : latest) {
      if (r->gpu >= 0 && r->gpu != gpu) continue;
      const Summary s = summarize(t, gpu, r->name, r->begin_ns, r->end_ns);
      rows.push_back({gpu, &r->name, s.energy.energy_mj * 1e-3, s.duration_s()});
    }
  }
  if (!rows.empty()) {
    for (const bool energy : {true, false}) {  // each family's samples together, after its TYPE
      family(energy ? Family{"powershape_region_energy_joules", "gauge",
                             "Energy of the last region of each name (in J)."}
                    : Family{"powershape_region_seconds", "gauge",
                             "Duration of the last region of each name (in s)."});
      for (const auto& row : rows) {
        out << (energy ? "powershape_region_energy_joules{" : "powershape_region_seconds{")
            << label(row.gpu) << ",region=\"" << escaped(*row.name) << "\"} "
            << (energy ? row.energy_j : row.seconds) << "\n";
      }
    }
  }
  return out.str();
}

std::string cpu_energy_text(const telemetry::RaplCounters& rapl) {
  const auto now = rapl.read();
  std::ostringstream out;
  out.precision(12);
  bool any = false;
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (!now[i]) continue;
    if (!any)
      out << "# HELP powershape_cpu_energy_joules_total A CPU zone's energy counter through RAPL "
             "(in J; it restarts where the hardware's wraps).\n"
             "# TYPE powershape_cpu_energy_joules_total counter\n";
    any = true;
    out << "powershape_cpu_energy_joules_total{zone=\"" << escaped(rapl.zones()[i].name) << "\"} "
        << static_cast<double>(*now[i]) * 1e-6 << "\n";
  }
  return out.str();
}

std::string energy_per_token_text(const trace::Trace& t, double tokens_per_step) {
  if (!(tokens_per_step > 0)) return "";
  const auto last = std::find_if(t.regions.rbegin(), t.regions.rend(),
                                 [](const trace::Region& r) { return r.name == "step"; });
  if (last == t.regions.rend()) return "";
  double mj = 0;
  for (int g = 0; g < static_cast<int>(t.devices.size()); ++g) {
    const auto s = analysis::summarize(t, g, "step", last->begin_ns, last->end_ns);
    if (s.energy.method == analysis::Energy::Method::kNone) return "";
    mj += s.energy.energy_mj;
  }
  std::ostringstream out;
  out.precision(12);
  out << "# HELP powershape_step_energy_per_token_joules The last step's energy over every GPU, "
         "over the tokens a step holds (a step: a region named 'step').\n"
         "# TYPE powershape_step_energy_per_token_joules gauge\n"
         "powershape_step_energy_per_token_joules "
      << mj * 1e-3 / tokens_per_step << "\n";
  return out.str();
}

std::string process_energy_text(const std::vector<analysis::ProcessEnergy>& totals) {
  if (totals.empty()) return "";
  std::ostringstream out;
  out.precision(12);
  out << "# HELP powershape_gpu_process_energy_joules_total A GPU's energy charged to a process by "
         "its share of the time a kernel ran (NVML's per-process samples; not what it drew).\n"
         "# TYPE powershape_gpu_process_energy_joules_total counter\n";
  for (const auto& e : totals) {
    out << "powershape_gpu_process_energy_joules_total{gpu=\"" << e.gpu << "\",pid=\""
        << (e.pid < 0 ? std::string() : std::to_string(e.pid)) << "\",process=\"" << escaped(e.name)
        << "\"} " << e.joules << "\n";
  }
  return out.str();
}

}  // namespace powershape::exporter
