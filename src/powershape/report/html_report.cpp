#include "powershape/report/html_report.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "powershape/analysis/summary.hpp"
#include "powershape/report/bins.hpp"
#include "powershape/report/page.hpp"
#include "powershape/report/trace_digest.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/util/atomic_file.hpp"
#include "powershape/util/error.hpp"

namespace powershape::report {
namespace {
using nlohmann::json;
using telemetry::Signal;

// Float arrays travel as base64 of little-endian float32: a quarter of their size as JSON text,
// decoded in the page by atob() into a Float32Array. Written here: nlohmann::json has no base64,
// and a dependency for twenty lines is not worth it.
std::string base64(const std::vector<float>& v) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  const std::size_t n = v.size() * sizeof(float);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (std::size_t i = 0; i < n; i += 3) {
    const uint32_t a = p[i], b = i + 1 < n ? p[i + 1] : 0, c = i + 2 < n ? p[i + 2] : 0;
    const uint32_t w = a << 16 | b << 8 | c;
    out += kAlphabet[w >> 18 & 63];
    out += kAlphabet[w >> 12 & 63];
    out += i + 1 < n ? kAlphabet[w >> 6 & 63] : '=';
    out += i + 2 < n ? kAlphabet[w & 63] : '=';
  }
  return out;
}

json gpu_data(const TraceDigest& dg, const TraceDigest::Gpu& gpu, const ReportInputs& in) {
  const Bins& b = dg.bins;
  json g = {{"index", gpu.index},
            {"name", ""},
            {"power_limit_w", nullptr},
            {"power_limit_from", ""},
            {"max_sm_clock_mhz", nullptr}};
  for (const auto& d : dg.header.devices) {
    if (d.index != gpu.index) continue;
    g["name"] = d.name;
    const auto& limit =
        d.enforced_power_limit_mw.ok() ? d.enforced_power_limit_mw : d.power_limit_mw;
    if (limit.ok()) {
      g["power_limit_w"] = static_cast<double>(limit.value) * 1e-3;
    } else if (const auto it = in.profile_limits.find(d.name); it != in.profile_limits.end()) {
      g["power_limit_w"] = it->second.first;
      g["power_limit_from"] = it->second.second;
    }
    if (d.max_sm_clock_mhz.ok()) g["max_sm_clock_mhz"] = d.max_sm_clock_mhz.value;
  }
  g["t0_s"] = static_cast<double>(b.from_ns - dg.t0_ns) * 1e-9;
  g["bin_s"] = static_cast<double>(b.width_ns) * 1e-9;
  g["bins"] = b.count;
  g["series"] = json::array();
  int shown = -1;  // a series' colour follows its place in kShown, the same in every report
  for (const auto& s : kShown) {
    ++shown;
    const auto it =
        std::find_if(gpu.series.begin(), gpu.series.end(),
                     [&](const TraceDigest::Series& x) { return x.signal == s.signal; });
    if (it == gpu.series.end()) continue;
    g["series"].push_back({{"panel", s.panel},
                           {"name", s.label},
                           {"color_index", shown},
                           {"unit", s.unit},
                           {"min", base64(it->extremes.min)},
                           {"max", base64(it->extremes.max)}});
  }
  g["reasons"] = json::array();
  int reason = -1;
  for (const auto& r : telemetry::reason::kAll) {
    ++reason;
    if ((gpu.reasons.seen() & r.bit) != 0)
      g["reasons"].push_back({{"name", r.name},
                              {"color_index", reason},
                              {"frac", base64(gpu.reasons.fraction(r.bit))}});
  }
  return g;
}

// A number of a summary row, or none.
std::optional<double> number(const json& row, const char* key) {
  if (!row.is_object() || !row.contains(key) || !row.at(key).is_number()) return std::nullopt;
  return row.at(key).get<double>();
}

}  // namespace

std::string verdict(const json& summary, const json& gpus) {
  std::string out;
  int said = 0;
  for (const auto& row : summary.is_array() ? summary : json::array()) {
    if (!row.is_object() || !row.contains("name") || row.at("name") != "all" ||
        !row.contains("gpu"))
      continue;
    if (++said > 8) {
      out += " (and more GPUs: the table below)";
      break;
    }
    const std::string who = "GPU " + row.at("gpu").dump();
    const auto capped = number(row, "power_capped_fraction");
    const auto thermal = number(row, "thermal_fraction");
    std::optional<double> mean, max;
    if (row.contains("sm_clock_mhz")) mean = number(row.at("sm_clock_mhz"), "mean");
    for (const auto& g : gpus)
      if (g.value("index", -1) == row.at("gpu")) max = number(g, "max_sm_clock_mhz");
    char clock[96] = "";
    if (mean && max)
      std::snprintf(clock, sizeof clock, ", its SM clock at %.0f MHz on average against %.0f MHz",
                    *mean, *max);
    else if (mean)
      std::snprintf(clock, sizeof clock, ", its SM clock at %.0f MHz on average", *mean);
    char s[400];
    if (capped && *capped >= 0.2)
      std::snprintf(s, sizeof s,
                    "%s held its power limit %.0f%% of the time%s: the limit, not the work, set "
                    "its speed, so shorter bursts (powershape repro, tune) or a lower clock cap "
                    "(powershape advise) may do the same work for less energy.",
                    who.c_str(), *capped * 100, clock);
    else if (thermal && *thermal >= 0.05)
      std::snprintf(s, sizeof s,
                    "%s was held back by heat %.0f%% of the time%s: cooling, or a power limit "
                    "that keeps it cooler (powershape advise), would let it keep its clock.",
                    who.c_str(), *thermal * 100, clock);
    else if (const double most = std::max(capped.value_or(0), thermal.value_or(0));
             (capped || thermal) && most < 0.005)
      std::snprintf(s, sizeof s,
                    "%s was never held back by its power limit or heat%s: the work, not the GPU's "
                    "limits, set its speed.",
                    who.c_str(), clock);
    else if (capped || thermal)
      std::snprintf(s, sizeof s,
                    "%s was held back by its power limit or heat %.0f%% of the time at most%s: the "
                    "work, not the GPU's limits, set its speed.",
                    who.c_str(), most * 100, clock);
    else
      std::snprintf(s, sizeof s,
                    "%s: the recording has no throttle reasons, so whether its limits held it "
                    "back cannot be said%s.",
                    who.c_str(), clock);
    out += (out.empty() ? "" : " ") + std::string(s);
  }
  return out;
}

namespace {

void require(const json& j, const char* what, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (!j.is_object() || !j.contains(k))
      throw invalid_input(std::string(what) + ": no '" + k + "' (not a " + what + " file?)");
  }
}

}  // namespace

json report_data(const ReportInputs& in, std::size_t max_bins) {
  if (!in.trace && !in.digest && !in.probe && !in.repro && !in.swing)
    throw invalid_input("nothing to report: no trace, probe, repro or swing result");
  json d = {{"title", in.title},       {"source", ""},
            {"start_utc", nullptr},    {"note", ""},
            {"gpus", json::array()},   {"regions", json::array()},
            {"events", json::array()}, {"summary", json::array()},
            {"probe", nullptr},        {"repro", nullptr}};
  std::optional<TraceDigest> own;
  if (in.trace && !in.digest) own = digest(*in.trace, max_bins, !in.summary);
  if (const TraceDigest* dg = in.digest ? &*in.digest : own ? &*own : nullptr) {
    const trace::Trace& t = dg->header;
    const Bins& b = dg->bins;
    const int64_t t0 = dg->t0_ns;
    d["source"] = t.source;
    if (t.wall_minus_steady_ns != 0)
      d["start_utc"] = telemetry::utc_iso(t0 + t.wall_minus_steady_ns);
    d["note"] = std::to_string(dg->rows) + " rows; " +
                (b.width_ns > 1'000'000 ? "one bin " + std::to_string(b.width_ns / 1'000'000) +
                                              " ms (the least and greatest value in it)"
                                        : "full resolution");
    for (const auto& g : dg->gpus) d["gpus"].push_back(gpu_data(*dg, g, in));
    const auto rel = [&](int64_t ns) { return static_cast<double>(ns - t0) * 1e-9; };
    for (const auto& r : t.regions) {
      d["regions"].push_back({{"name", r.name},
                              {"gpu", r.gpu},
                              {"begin_s", rel(r.begin_ns)},
                              {"end_s", rel(r.end_ns)}});
    }
    for (const auto& e : t.events)
      d["events"].push_back({{"t_s", rel(e.t_ns)}, {"gpu", e.gpu}, {"what", e.what}});
    d["summary"] = in.summary ? *in.summary : analysis::to_json(dg->summary);
    d["verdict"] = verdict(d["summary"], d["gpus"]);
    if (in.job && in.job->is_object() && !in.job->empty()) d["job"] = *in.job;
  }
  if (in.probe) {
    require(*in.probe, "probe", {"points", "boost_tflops", "sustained_tflops"});
    d["probe"] = *in.probe;
  }
  if (in.repro) {
    require(*in.repro, "repro", {"configs"});
    for (const auto& c : in.repro->at("configs")) require(c, "repro", {"name"});
    json r = *in.repro;
    r.erase("measurements");  // every run's raw figures: the JSON file has them, the page not
    d["repro"] = r;
  }
  if (in.swing) {
    require(*in.swing, "swing", {"spectrum", "verdicts", "power_w", "ramp_w_per_s", "range_w"});
    const json& sp = in.swing->at("spectrum");
    if (!sp.is_object() || !sp.contains("freq_hz") || !sp.contains("psd_w2_per_hz") ||
        !sp.at("freq_hz").is_array() || !sp.at("psd_w2_per_hz").is_array() ||
        sp.at("freq_hz").empty() || sp.at("freq_hz").size() != sp.at("psd_w2_per_hz").size())
      throw invalid_input("swing: its spectrum is not two lists of one length (not a swing file?)");
    d["swing"] = *in.swing;
  }
  return d;
}

std::string render_page(const json& data, bool* replaced) {
  std::string payload;
  try {
    payload = data.dump();
    if (replaced != nullptr) *replaced = false;
  } catch (const json::type_error&) {  // 316: a string that is not UTF-8
    payload = data.dump(-1, ' ', false, json::error_handler_t::replace);
    if (replaced != nullptr) *replaced = true;
  }
  // In JSON a '<' can only be inside a string, where \u003c means the same to the script and
  // nothing to the HTML parser ("</script>", "<!--<script>" would end or stall the element).
  std::string escaped;
  escaped.reserve(payload.size());
  for (const char c : payload) {
    if (c == '<') {
      escaped += "\\u003c";
    } else {
      escaped += c;
    }
  }
  std::string page(kPage);
  const std::string mark = "/*POWERSHAPE_DATA*/";
  page.replace(page.find(mark), mark.size(), escaped);
  return page;
}

bool write_report(const std::string& path, const ReportInputs& in) {
  bool replaced = false;
  util::write_file_atomic(path, render_page(report_data(in), &replaced));
  return replaced;
}

}  // namespace powershape::report
