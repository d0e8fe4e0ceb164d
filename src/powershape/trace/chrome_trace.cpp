#include "powershape/trace/chrome_trace.hpp"

#include "powershape/util/json_io.hpp"

namespace powershape::trace {
namespace {

using telemetry::Signal;

constexpr int kRegionsPid = 1000;  // regions over every GPU

// A signal's value in the unit its track shows: milli-units become units.
double shown(Signal s, int64_t v) {
  const std::string_view unit = telemetry::spec(s).unit;
  return unit == "mW" || unit == "mJ" ? static_cast<double>(v) * 1e-3 : static_cast<double>(v);
}

std::string track(Signal s) {
  const auto& sp = telemetry::spec(s);
  std::string unit(sp.unit);
  if (unit == "mW") unit = "W";
  if (unit == "mJ") unit = "J";
  return std::string(sp.name) + (unit.empty() ? "" : " [" + unit + "]");
}

}  // namespace

nlohmann::json to_chrome_trace(const Trace& t) {
  const auto us = [&](int64_t ns) {
    return static_cast<double>(ns + t.wall_minus_steady_ns) * 1e-3;
  };
  nlohmann::json ev = nlohmann::json::array();
  for (const auto& d : t.devices) {
    ev.push_back({{"name", "process_name"},
                  {"ph", "M"},
                  {"pid", d.index},
                  {"args", {{"name", "GPU " + std::to_string(d.index) + ": " + d.name}}}});
  }
  ev.push_back({{"name", "process_name"},
                {"ph", "M"},
                {"pid", kRegionsPid},
                {"args", {{"name", "regions"}}}});
  for (const auto& s : t.samples) {
    for (std::size_t i = 0; i < telemetry::kSignalCount; ++i) {
      const auto sig = static_cast<Signal>(i);
      const auto& r = s[sig];
      if (!r.ok()) continue;
      ev.push_back({{"name", track(sig)},
                    {"ph", "C"},
                    {"ts", us(s.t_ns)},
                    {"pid", s.gpu},
                    {"args", {{"value", shown(sig, r.value)}}}});
    }
  }
  for (const auto& r : t.regions) {
    ev.push_back({{"name", r.name},
                  {"ph", "X"},
                  {"ts", us(r.begin_ns)},
                  {"dur", static_cast<double>(r.end_ns - r.begin_ns) * 1e-3},
                  {"pid", r.gpu < 0 ? kRegionsPid : r.gpu},
                  {"tid", 1}});
  }
  for (const auto& e : t.events) {
    ev.push_back({{"name", e.what},
                  {"ph", "i"},
                  {"s", "p"},
                  {"ts", us(e.t_ns)},
                  {"pid", e.gpu < 0 ? kRegionsPid : e.gpu},
                  {"tid", 1}});
  }
  return {{"traceEvents", ev},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"source", t.source},
            {"wall_clock", t.wall_minus_steady_ns != 0},
            {"wall_minus_steady_ns", t.wall_minus_steady_ns}}}};
}

void write_chrome_trace(const std::string& path, const Trace& t) {
  util::write_json_file(path, to_chrome_trace(t));
}

}  // namespace powershape::trace
