#include "powershape/job/monitor_run.hpp"

#include <unistd.h>

#include <memory>
#include <optional>

#include "powershape/analysis/job_energy.hpp"
#include "powershape/analysis/job_energy_table.hpp"
#include "powershape/analysis/process_energy.hpp"
#include "powershape/analysis/summary.hpp"
#include "powershape/analysis/summary_table.hpp"
#include "powershape/exporter/metrics_server.hpp"
#include "powershape/exporter/publisher.hpp"
#include "powershape/monitor/live_view.hpp"
#include "powershape/monitor/session.hpp"
#include "powershape/monitor/session_table.hpp"
#include "powershape/sim/sim_source.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/telemetry/control_fifo.hpp"
#include "powershape/telemetry/rapl.hpp"

namespace powershape::job {
namespace {

std::string title_of(const std::vector<std::string>& command) {
  if (command.empty()) return "the recording";
  std::string t = "'";
  for (const auto& a : command) t += (t.size() > 1 ? " " : "") + a;
  return t + "'";
}

}  // namespace

int run_monitor(const MonitorRun& o, std::FILE* out, const MonitorSay& said) {
  MonitorSay say = said;
  if (!say.note) say.note = [](const std::string&) {};
  if (!say.output) say.output = [](const std::string&, const std::string&) {};
  monitor::check_periods(o.interval_ms, o.slow_interval_ms);  // before anything opens
  auto source = sim::open_source(o.source, o.gpus);
  std::unique_ptr<exporter::MetricsServer> server;
  if (!o.prometheus.empty()) {
    server = std::make_unique<exporter::MetricsServer>(o.prometheus);
    say.note("serving http://" + server->address() + "/metrics");
  }
  monitor::SessionOptions so;
  monitor::set_periods(so, o.interval_ms, o.slow_interval_ms);
  if (o.every_interval) so.sampler.stretch = 1;
  so.sampler.processes = true;  // each GPU's energy by process
  so.csv_path = o.csv;
  so.every_row = o.every_row;
  so.command = o.command;
  // The CPU's energy over the run, where RAPL is there to read (Zeus and CodeCarbon give it).
  const telemetry::RaplCounters rapl;
  const auto cpu_from = rapl.read();
  monitor::Session session(*source, so, say.note);
  trace::Trace& recorded = session.trace();
  if (session.start() && o.command.empty()) {
    say.note(std::string("recording until Ctrl-C (regions: ") + telemetry::kControlEnv + "=" +
             session.fifo_path() + ")");
  }
  int64_t next_view = 0;
  exporter::Publisher publisher({o.textfile, server.get(), o.keep_s, o.tokens_per_step}, rapl,
                                say.output);
  std::optional<monitor::LiveView> view;
  if (o.live) view.emplace(isatty(fileno(out)) != 0);
  session.run([&] {
    if (view && telemetry::steady_now_ns() >= next_view) {
      next_view = telemetry::steady_now_ns() + 250'000'000;  // four views a second
      view->show(out, recorded);
    }
    publisher.tick(recorded, telemetry::steady_now_ns());
  });
  const int code = session.finish();

  const nlohmann::json cpu = analysis::cpu_energy(rapl, cpu_from, rapl.read());
  auto summaries = analysis::summarize(recorded);
  analysis::print_summaries(out, title_of(o.command), recorded, summaries, say.kept_in);
  analysis::print_cpu_energy(out, cpu, rapl, summaries);
  const auto by_process = publisher.finish(recorded);
  analysis::print_by_process(out, by_process);
  const nlohmann::json per_token =
      analysis::energy_per_token(recorded, summaries, cpu, o.tokens_per_step);
  if (o.tokens_per_step > 0 && per_token.is_null())
    std::fprintf(out,
                 " energy a token: none: %s%sthe command's steps marked as 'step' regions "
                 "(powershape.step, powershape mark begin step) and their energy\n",
                 say.tokens.c_str(), say.tokens.empty() ? "it needs " : " needs ");
  analysis::print_energy_per_token(out, per_token, o.tokens_per_step);
  monitor::print_sampler(out, session);
  report::RunRecord run;
  run.title = "powershape monitor: " + title_of(o.command);
  run.summaries = &summaries;
  run.cpu = cpu;
  run.per_token = per_token;
  run.by_process = analysis::to_json(by_process);
  const bool written = report::write_outputs(o.outputs, recorded, run, say.output);
  // The command's own failure comes first; a lost output makes a successful run fail.
  return code == 0 && (session.file_failed() || !written) ? 1 : code;
}

}  // namespace powershape::job
