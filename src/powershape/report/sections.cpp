#include "powershape/report/sections.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <utility>

#include "powershape/analysis/grid_spec.hpp"
#include "powershape/analysis/swing.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"

namespace powershape::report {
namespace {

// A trace's swings against the shipped grid spec, for the report's section; none (with a word)
// where the trace has no power to analyse. Where the recording gives no limit, the rated power is
// its GPUs' profiles' limits (as the page draws them), said in the section.
std::optional<nlohmann::json> swing_of(
    const TraceDigest& d,
    const std::map<std::string, std::pair<double, std::string>>& profile_limits) {
  try {
    if (!d.power) throw invalid_input(d.no_power);
    const auto spec = analysis::load_grid_spec(analysis::kDefaultGridSpec);
    analysis::SwingOptions o = analysis::swing_options(spec, d.power->rated_w);
    std::string from;
    if (o.rated_w <= 0 && !d.header.devices.empty()) {
      double sum = 0;
      for (const auto& dev : d.header.devices) {
        const auto it = profile_limits.find(dev.name);
        if (it == profile_limits.end()) {
          sum = 0;
          break;
        }
        sum += it->second.first;
        from = it->second.second;
      }
      o.rated_w = sum;
    }
    auto j = analysis::to_json(analysis::analyse_swing(d.power->power, spec, o));
    j["spec"] = {{"name", spec.name}, {"source", spec.source}};
    if (o.rated_w > 0 && !from.empty())
      j["rated_from"] = "the " + from + " profile's power limit (the recording holds none)";
    return j;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "powershape: no swing section: %s\n", e.what());
    return std::nullopt;
  }
}

// The job's energy beside the GPUs' that a monitor --json file holds (RAPL, by process, a token).
nlohmann::json job_of(const nlohmann::json& j) {
  nlohmann::json job = nlohmann::json::object();
  for (const char* k : {"cpu_energy", "energy_per_token", "gpu_energy_by_process"}) {
    if (!j.contains(k) || j.at(k).is_null()) continue;
    const nlohmann::json& v = j.at(k);
    const bool list = std::string(k) == "gpu_energy_by_process";
    if (list ? !v.is_array() : !v.is_object())
      throw invalid_input(std::string(k) + ": expected " + (list ? "a list" : "an object"));
    for (const auto& x : list ? v : nlohmann::json::array())
      if (!x.is_object() || !x.value("joules", nlohmann::json()).is_number() ||
          !x.value("gpu", nlohmann::json()).is_number_integer())
        throw invalid_input(std::string(k) + ": an entry without its gpu and joules");
    job[k] = v;
  }
  return job;
}

}  // namespace

ReportInputs read_inputs(const ReportFiles& f, const ProfileLimitsFn& profile_limits,
                         std::optional<trace::Trace>* whole) {
  if (whole != nullptr && f.trace.empty()) throw invalid_input("perfetto", "needs a trace");
  if (!f.json.empty() && f.trace.empty())
    throw invalid_input("json", "it summarises a trace; give the trace too");
  ReportInputs in;
  in.title = f.title;
  if (!f.trace.empty()) {
    // Read twice, a row at a time: a day of a node's samples fits in memory.
    if (whole == nullptr) in.digest = digest_file(f.trace, kMaxBins, f.json.empty());
    if (!in.digest) {  // asked for whole, or a file whose rows are out of order
      trace::Trace t = trace::read_csv(f.trace);
      in.digest = digest(t, kMaxBins, f.json.empty());
      if (whole != nullptr) *whole = std::move(t);
    }
    in.profile_limits = profile_limits(in.digest->header);
  }
  if (!f.json.empty()) {
    const nlohmann::json j = util::read_as(f.json, [](const nlohmann::json& j) {
      if (!j.is_object() || !j.contains("summary") || !j.at("summary").is_array())
        throw invalid_input("no 'summary' list (not the JSON of monitor or sim?)");
      return j;
    });
    in.summary = j.at("summary");
    try {
      in.job = job_of(j);
    } catch (const std::runtime_error& e) {
      throw invalid_input("json", f.json + ": " + e.what());
    }
  }
  if (!f.probe.empty()) in.probe = util::read_json_file(f.probe);
  if (!f.repro.empty()) in.repro = util::read_json_file(f.repro);
  if (!f.swing.empty())
    in.swing = util::read_json_file(f.swing);
  else if (in.digest)
    in.swing = swing_of(*in.digest, in.profile_limits);
  if (in.title.empty()) {
    const std::string& named = !f.trace.empty()   ? f.trace
                               : !f.repro.empty() ? f.repro
                               : !f.probe.empty() ? f.probe
                                                  : f.swing;
    in.title = "powershape report: " + named.substr(named.find_last_of('/') + 1);
  }
  return in;
}

}  // namespace powershape::report
