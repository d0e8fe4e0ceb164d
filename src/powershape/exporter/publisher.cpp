#include "powershape/exporter/publisher.hpp"

#include <cstdint>
#include <utility>

#include "powershape/exporter/prometheus.hpp"
#include "powershape/exporter/textfile.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/trace/recording.hpp"

namespace powershape::exporter {

Publisher::Publisher(PublishOptions o, const telemetry::RaplCounters& rapl, SayFn say)
    : o_(std::move(o)), rapl_(rapl), say_(std::move(say)) {}

void Publisher::tick(trace::Trace& t, int64_t now_ns) {
  if (now_ns < next_ns_) return;
  next_ns_ = now_ns + kPublishEveryNs;
  // Process samples come once a second: a window is added once its last ones are in.
  tally_.add(t, now_ns - 2'000'000'000);
  if (o_.keep_s > 0) trace::forget_before(t, now_ns - static_cast<int64_t>(o_.keep_s * 1e9));
  if (o_.server != nullptr || !o_.textfile.empty()) publish(t, now_ns, true);
}

std::vector<analysis::ProcessEnergy> Publisher::finish(const trace::Trace& t) {
  tally_.add(t, INT64_MAX, true);
  // The textfile a last time; the endpoint has gone with the recording.
  if (!o_.textfile.empty()) publish(t, telemetry::steady_now_ns(), false);
  return tally_.totals();
}

void Publisher::publish(const trace::Trace& t, int64_t now_ns, bool serve) {
  std::size_t left_out = 0;
  const std::string text = prometheus_now(t, now_ns, &left_out) + cpu_energy_text(rapl_) +
                           energy_per_token_text(t, o_.tokens_per_step) +
                           process_energy_text(tally_.totals());
  if (left_out > 0 && !said_names_) {
    say_("", "more than " + std::to_string(kMaxRegionNames) + " region names: only the " +
                 std::to_string(kMaxRegionNames) + " that ended last are exported");
    said_names_ = true;
  }
  if (serve && o_.server != nullptr) o_.server->set_metrics(text);
  if (o_.textfile.empty() || write_textfile(o_.textfile, text) || said_file_) return;
  say_("textfile", "cannot write " + o_.textfile);
  said_file_ = true;
}

}  // namespace powershape::exporter
