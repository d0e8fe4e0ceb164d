#include "powershape/analysis/summary_table.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace powershape::analysis {
namespace {

void line(std::FILE* out, const char* value, const char* what, const std::string& note = "") {
  std::fprintf(out, "  %18s  %-22s%s\n", value, what,
               note.empty() ? "" : ("(" + note + ")").c_str());
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void block(std::FILE* out, const analysis::Summary& s) {
  line(out, fmt("%.3f s", s.duration_s()).c_str(), "duration");
  if (s.energy.method != analysis::Energy::Method::kNone) {
    std::string note = analysis::to_string(s.energy.method);
    if (s.energy.method == analysis::Energy::Method::kCounter) {
      note += ", " + std::to_string(s.energy.counter_updates) + " updates";
    }
    line(out, fmt("%.1f J", s.energy.energy_mj * 1e-3).c_str(), "energy", note);
  } else {
    line(out, "-", "energy", "no energy counter or power reading");
  }
  if (s.avg_power_w) line(out, fmt("%.1f W", *s.avg_power_w).c_str(), "average power");
  // The limit holds a mean over the driver's window: a single reading may pass it.
  if (s.peak_power_w) line(out, fmt("%.1f W", *s.peak_power_w).c_str(), "peak power (one reading)");
  if (s.sm_clock_mhz.covered_ns > 0) {
    const auto& c = s.sm_clock_mhz;
    line(out, fmt("%.0f MHz", c.mean).c_str(), "SM clock mean",
         fmt("p5 %.0f", c.p5) + fmt(", p50 %.0f", c.p50) + fmt(", p95 %.0f", c.p95));
  }
  if (auto f = s.power_capped_fraction())
    line(out, fmt("%.1f %%", *f * 100).c_str(), "power-capped");
  if (auto f = s.thermal_fraction())
    line(out, fmt("%.1f %%", *f * 100).c_str(), "thermally throttled");
  if (s.peak_temp_c)
    line(out, fmt("%.0f C", static_cast<double>(*s.peak_temp_c)).c_str(), "peak temperature");
}

// A region name that repeats (a training loop's steps) shows its first few blocks, then one line
// for the rest: thousands of steps would bury the summary. --json keeps every one.
constexpr int kEachShown = 3;

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

void print_summaries(std::FILE* out, const std::string& title, const trace::Trace& trace,
                     const std::vector<analysis::Summary>& summaries, const std::string& kept_in) {
  std::fprintf(out, "\n Power stats for %s (%s):\n", title.c_str(), trace.source.c_str());
  // The blocks beyond the first kEachShown of a name on a GPU: their seconds and joules.
  std::map<std::pair<int, std::string>, int> seen;
  std::map<std::pair<int, std::string>, std::pair<std::vector<double>, std::vector<double>>> rest;
  for (const auto& s : summaries) {
    if (s.name == "all" || ++seen[{s.gpu, s.name}] <= kEachShown) continue;
    auto& [seconds, joules] = rest[{s.gpu, s.name}];
    seconds.push_back(s.duration_s());
    if (s.energy.method != analysis::Energy::Method::kNone)
      joules.push_back(s.energy.energy_mj * 1e-3);
  }
  seen.clear();
  for (const auto& s : summaries) {
    // Samples name a GPU by its position in the trace's device list.
    auto pos = static_cast<std::size_t>(s.gpu);
    int index = pos < trace.devices.size() ? trace.devices[pos].index : s.gpu;
    if (s.name != "all" && ++seen[{s.gpu, s.name}] > kEachShown) {
      if (seen[{s.gpu, s.name}] > kEachShown + 1) continue;
      const auto& [seconds, joules] = rest[{s.gpu, s.name}];
      std::fprintf(out, "\n GPU %d  region '%s': %zu more, each a median %.3f s", index,
                   s.name.c_str(), seconds.size(), median(seconds));
      if (joules.size() == seconds.size()) std::fprintf(out, " and %.1f J", median(joules));
      std::fprintf(out, " (%s keeps every one)\n", kept_in.c_str());
      continue;
    }
    if (s.name == "all") {
      std::fprintf(out, "\n GPU %d  %s\n", index,
                   pos < trace.devices.size() ? trace.devices[pos].name.c_str() : "");
    } else {
      std::fprintf(out, "\n GPU %d  region '%s'\n", index, s.name.c_str());
    }
    block(out, s);
  }
  // A node of several GPUs: their whole recordings together.
  int gpus = 0;
  double mj = 0, watts = 0, seconds = 0;
  bool energy = true, power = true;
  for (const auto& s : summaries) {
    if (s.name != "all") continue;
    ++gpus;
    energy = energy && s.energy.method != analysis::Energy::Method::kNone;
    power = power && s.avg_power_w.has_value();
    mj += s.energy.energy_mj;
    watts += s.avg_power_w.value_or(0);
    seconds = std::max(seconds, s.duration_s());
  }
  if (gpus > 1) {
    std::fprintf(out, "\n node  %d GPUs together\n", gpus);
    char v[64];
    std::snprintf(v, sizeof v, "%.3f s", seconds);
    line(out, v, "duration");
    if (energy) {
      std::snprintf(v, sizeof v, "%.1f J", mj * 1e-3);
      line(out, v, "energy", "the GPUs' sum");
    }
    if (power) {
      std::snprintf(v, sizeof v, "%.1f W", watts);
      line(out, v, "average power");
    }
  }
  std::fputc('\n', out);
}

}  // namespace powershape::analysis
