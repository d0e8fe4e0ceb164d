#pragma once
// What a recording publishes while it runs (monitor --prometheus / --textfile, the exporter):
// Prometheus' view of it, rendered once a second for the textfile and the endpoint alike. Each
// tick folds the second's process samples into each GPU's energy by process and, with a
// retention, forgets what is older. A textfile that cannot be written and region names left out
// of the series are said once each; recording goes on.
#include <functional>
#include <string>
#include <vector>

#include "powershape/analysis/process_energy.hpp"
#include "powershape/exporter/metrics_server.hpp"
#include "powershape/telemetry/rapl.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::exporter {

struct PublishOptions {
  std::string textfile;             // rewritten whole each second; empty: none
  MetricsServer* server = nullptr;  // served at /metrics; none: nullptr
  double keep_s = 0;                // > 0: only the last keep_s seconds are kept in the trace
  double tokens_per_step = 0;       // > 0: the energy a token of the recording's `step` regions
};

class Publisher {
 public:
  // say(output, what): output "textfile" where that file failed, "" for a note.
  using SayFn = std::function<void(const std::string& output, const std::string& what)>;
  Publisher(PublishOptions o, const telemetry::RaplCounters& rapl, SayFn say);
  // Called as often as the recording loops: acts once a second.
  void tick(trace::Trace& t, int64_t now_ns);
  // The recording has ended: every process sample counted, the textfile written a last time.
  // Returns each GPU's energy by process.
  std::vector<analysis::ProcessEnergy> finish(const trace::Trace& t);

 private:
  void publish(const trace::Trace& t, int64_t now_ns, bool serve);
  PublishOptions o_;
  const telemetry::RaplCounters& rapl_;
  SayFn say_;
  analysis::ProcessEnergyTally tally_;
  int64_t next_ns_ = 0;
  bool said_file_ = false, said_names_ = false;
};

}  // namespace powershape::exporter
