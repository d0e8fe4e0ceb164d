#pragma once
// `powershape report`: one self-contained HTML file (no network) with the trace's power, clocks,
// temperature and throttle reasons over a zoomable time axis, regions shaded and named, the
// per-region summary, and, when given, probe's burst-throughput curve, repro's ratios and the
// power's swings in the grid's terms (its spectrum, the spec's bands and verdicts).
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "powershape/report/trace_digest.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::report {

struct ReportInputs {
  std::string title;
  std::optional<trace::Trace> trace;
  std::optional<TraceDigest> digest;  // a trace already digested (digest_file): instead of trace
  std::optional<nlohmann::json> summary;  // a `--json` file's summary list; else computed
  std::optional<nlohmann::json> probe;    // `probe -o` JSON
  std::optional<nlohmann::json> repro;    // `repro -o` JSON
  std::optional<nlohmann::json> swing;    // analysis::to_json of a swing analysis (swing --json)
  // What the recorder measured beside the GPUs (monitor --json's cpu_energy, energy_per_token,
  // gpu_energy_by_process, those it has); shown with the trace's summary.
  std::optional<nlohmann::json> job;
  // The power limit of each GPU name's profile (W) and that profile's name, for a recording that
  // holds no limit of its own (the caller looks them up: sim comes after report); drawn and said
  // as the profile's.
  std::map<std::string, std::pair<double, std::string>> profile_limits;
};

// Time bins per GPU: what an hour of samples is reduced to (3600 s / 20000 = 180 ms a bin).
inline constexpr std::size_t kMaxBins = 20000;

// One sentence a GPU (at most 8) from its whole-run summary row: whether its power limit or heat
// set its speed, with its mean SM clock against its maximum; "" without an "all" row.
std::string verdict(const nlohmann::json& summary, const nlohmann::json& gpus);

// What the page draws, as JSON; a trace is digested with at most max_bins bins (a digest given
// was made with its own). Throws std::runtime_error when there is nothing to show or a
// probe / repro document lacks what its chart needs.
nlohmann::json report_data(const ReportInputs& in, std::size_t max_bins = kMaxBins);

// The page with `data` inside it. Every '<' in the data is written \u003c, so no string (a region
// name, a title, a trace cell) can end or open an element in the page's script; text that is not
// UTF-8 is replaced by U+FFFD, and *replaced (when given) says whether any was.
std::string render_page(const nlohmann::json& data, bool* replaced = nullptr);

// report_data + render_page, written to `path` whole (a std::runtime_error naming it when it
// cannot). Returns true when text that was not UTF-8 was replaced by U+FFFD.
bool write_report(const std::string& path, const ReportInputs& in);

}  // namespace powershape::report
