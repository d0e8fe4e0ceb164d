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

json gpu_data(const TraceDigest& dg, const TraceDigest::Gpu& gpu) {
  const Bins& b = dg.bins;
  json g = {{"index", gpu.index}, {"name", ""}, {"power_limit_w", nullptr}};
  for (const auto& d : dg.header.devices) {
    if (d.index != gpu.index) continue;
    g["name"] = d.name;
    const auto& limit =
        d.enforced_power_limit_mw.ok() ? d.enforced_power_limit_mw : d.power_limit_mw;
    if (limit.ok()) g["power_limit_w"] = static_cast<double>(limit.value) * 1e-3;
  }
  g["t0_s"] = static_cast<double>(b.from_ns - dg.t0_ns) * 1e-9;
  g["bin_s"] = static_cast<double>(b.width_ns) * 1e-9;
  g["bins"] = b.count;
  g["series"] = json::array();
  for (const auto& s : kShown) {
    const auto it =
        std::find_if(gpu.series.begin(), gpu.series.end(),
                     [&](const TraceDigest::Series& x) { return x.signal == s.signal; });
    if (it == gpu.series.end()) continue;
    g["series"].push_back({{"panel", s.panel},
                           {"name", s.label},
                           {"unit", s.unit},
                           {"min", base64(it->extremes.min)},
                           {"max", base64(it->extremes.max)}});
  }
  g["reasons"] = json::array();
  for (const auto& r : telemetry::reason::kAll) {
    if ((gpu.reasons.seen() & r.bit) != 0)
      g["reasons"].push_back({{"name", r.name}, {"frac", base64(gpu.reasons.fraction(r.bit))}});
  }
  return g;
}

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
    for (const auto& g : dg->gpus) d["gpus"].push_back(gpu_data(*dg, g));
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
