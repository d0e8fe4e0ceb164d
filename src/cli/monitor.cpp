#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "error_message.hpp"
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
#include "powershape/report/run_outputs.hpp"
#include "powershape/sim/sim_source.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/telemetry/control_fifo.hpp"
#include "powershape/telemetry/rapl.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/int_list.hpp"
#include "powershape/util/output_lock.hpp"
#include "powershape/util/printable.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

struct MonitorOptions {
  double interval_ms = 10;
  double slow_interval_ms = 1000;
  bool every_interval = false;
  std::string gpus;
  std::string out_csv;
  std::string out_json;
  std::string out_perfetto;
  std::string out_report;
  std::string out_textfile;
  std::string prometheus;  // [ADDR:]PORT to serve /metrics on
  bool live = false;
  bool every_row = false;  // the CSV keeps polls that repeat the one before
  double keep_s = 0;       // > 0: only the last keep_s seconds are kept in memory (the exporter)
  std::string source = "nvml";
  double tokens_per_step = 0;  // > 0: the energy a token of the command's `step` regions
  std::vector<std::string> command;
};

void warn(const std::string& what) { std::fprintf(stderr, "powershape: %s\n", what.c_str()); }

std::string title_of(const std::vector<std::string>& command) {
  if (command.empty()) return "the recording";
  std::string t = "'";
  for (const auto& a : command) t += (t.size() > 1 ? " " : "") + a;
  return t + "'";
}

int run_monitor(const MonitorOptions& o) {
  monitor::check_periods(o.interval_ms, o.slow_interval_ms);  // before anything opens
  auto source = sim::open_source(
      o.source, o.gpus.empty() ? std::vector<int>{} : util::parse_int_list(o.gpus, "gpus"));
  // The outputs, claimed before anything runs: never the --source trace itself, never one path
  // for two, and never a file another monitor is writing.
  const auto claimed =
      util::claim_outputs({{o.out_csv, "-o", util::OutputLock::Written::kLive},
                           {o.out_json, "--json"},
                           {o.out_perfetto, "--perfetto"},
                           {o.out_report, "--report"}},
                          {o.source.rfind("fake:", 0) == 0 ? o.source.substr(5) : ""});
  // The textfile is rewritten whole each second, by rename: checked, not locked.
  if (!o.out_textfile.empty())
    util::OutputLock(o.out_textfile, "--textfile", util::OutputLock::Written::kAtEnd);
  std::unique_ptr<exporter::MetricsServer> server;
  if (!o.prometheus.empty()) {
    server = std::make_unique<exporter::MetricsServer>(o.prometheus);
    std::fprintf(stderr, "powershape: serving http://%s/metrics\n", server->address().c_str());
  }
  monitor::SessionOptions so;
  monitor::set_periods(so, o.interval_ms, o.slow_interval_ms);
  if (o.every_interval) so.sampler.stretch = 1;
  so.sampler.processes = true;  // each GPU's energy by process
  so.csv_path = o.out_csv;
  so.every_row = o.every_row;
  so.command = o.command;
  // The CPU's energy over the run, where RAPL is there to read (Zeus and CodeCarbon give it).
  const telemetry::RaplCounters rapl;
  const auto cpu_from = rapl.read();
  monitor::Session session(*source, so, warn);
  trace::Trace& recorded = session.trace();
  if (session.start() && o.command.empty()) {
    std::fprintf(stderr, "powershape: recording until Ctrl-C (regions: %s=%s)\n",
                 telemetry::kControlEnv, session.fifo_path().c_str());
  }
  int64_t next_view = 0;
  exporter::Publisher publisher({o.out_textfile, server.get(), o.keep_s, o.tokens_per_step}, rapl,
                                say_output);
  std::optional<monitor::LiveView> view;
  if (o.live) view.emplace(isatty(STDERR_FILENO) != 0);
  session.run([&] {
    if (view && telemetry::steady_now_ns() >= next_view) {
      next_view = telemetry::steady_now_ns() + 250'000'000;  // four views a second
      view->show(stderr, recorded);
    }
    publisher.tick(recorded, telemetry::steady_now_ns());
  });
  int code = session.finish();

  const nlohmann::json cpu = analysis::cpu_energy(rapl, cpu_from, rapl.read());
  auto summaries = analysis::summarize(recorded);
  analysis::print_summaries(stderr, title_of(o.command), recorded, summaries, "--json");
  analysis::print_cpu_energy(stderr, cpu, rapl, summaries);
  const auto by_process = publisher.finish(recorded);
  analysis::print_by_process(stderr, by_process);
  const nlohmann::json per_token =
      analysis::energy_per_token(recorded, summaries, cpu, o.tokens_per_step);
  if (o.tokens_per_step > 0 && per_token.is_null())
    std::fprintf(stderr,
                 " energy a token: none: --tokens-per-step needs the command's steps marked as "
                 "'step' regions (powershape.step, powershape mark begin step) and their energy\n");
  analysis::print_energy_per_token(stderr, per_token, o.tokens_per_step);
  monitor::print_sampler(stderr, session);
  bool lost = session.file_failed();
  report::RunRecord run;
  run.title = "powershape monitor: " + title_of(o.command);
  run.summaries = &summaries;
  run.cpu = cpu;
  run.per_token = per_token;
  run.by_process = analysis::to_json(by_process);
  if (!report::write_outputs({o.out_json, o.out_perfetto, o.out_report}, recorded, run, say_output))
    lost = true;
  // The command's own failure comes first; a lost output makes a successful run fail.
  return code == 0 && lost ? 1 : code;
}

}  // namespace

void add_monitor(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "monitor", "Run a command and record GPU telemetry until it exits (or until Ctrl-C)");
  static MonitorOptions o;
  cmd->add_option("--interval", o.interval_ms,
                  "Sampling period in ms (default 10): the finest; a signal the driver updates "
                  "less often is read at half its update period, at most every 4 intervals");
  cmd->add_flag("--every-interval", o.every_interval,
                "Read every signal every interval, however often the driver updates it");
  cmd->add_option("--slow-interval", o.slow_interval_ms,
                  "Shortest period in ms for signals that are expensive to read, such as the "
                  "energy counter on Hopper (~3 ms a read); default 1000, longer where they would "
                  "take over 0.1% of a core (all GPUs together)");
  cmd->add_option("--gpus", o.gpus, "GPU indices to watch, e.g. 0,1 (default all)");
  output(cmd->add_option("-o,--output", o.out_csv, "Write the trace as CSV"));
  cmd->add_flag("--every-row", o.every_row,
                "Keep every poll in the CSV (by default a poll equal to the one before is left "
                "out, save one a second: readings hold until the next row)");
  output(cmd->add_option("--json", o.out_json, "Write metadata and the summary as JSON"));
  output(cmd->add_option(
      "--textfile", o.out_textfile,
      "Keep a Prometheus text file (dcgm-exporter's names) for node_exporter's textfile "
      "collector, rewritten every second"));
  output(
      cmd->add_option("--perfetto", o.out_perfetto,
                      "Write the trace for Perfetto / chrome://tracing (wall-clock microseconds)"));
  output(cmd->add_option(
      "--report", o.out_report,
      "Also write the trace and summary as a self-contained HTML page (see report)"));
  cmd->add_option("--prometheus", o.prometheus,
                  "Serve /metrics for Prometheus on PORT (loopback), ADDR:PORT or [ADDR6]:PORT "
                  "while recording");
  cmd->add_flag("--live", o.live,
                "Show one line per GPU a few times a second: power against the limit, SM clock, "
                "temperature, energy so far and the throttle reasons");
  cmd->add_option(
      "--source", o.source,
      "nvml (default), fake:TRACE.csv (fake:h200/gemm_sustained: a shipped one), hwmon[:ROOT] or "
      "sim:PROFILE (a simulated GPU running the LM head)");
  cmd->add_option("--tokens-per-step", o.tokens_per_step,
                  "Tokens a step: with the command's steps marked ('step' regions), the energy a "
                  "token")
      ->check(finite_in(1, 1e12));
  cmd->add_option("command", o.command, "The command to run, after --");
  cmd->positionals_at_end();
  cmd->callback([] { exit_code() = run_monitor(o); });
}

void add_exporter(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "exporter",
      "Serve GPU telemetry to Prometheus (/metrics, dcgm-exporter's names) until Ctrl-C");
  static MonitorOptions o;
  o.prometheus = "9401";
  o.interval_ms = 100;
  o.keep_s = 300;
  cmd->add_option("--listen", o.prometheus,
                  "PORT (on loopback), ADDR:PORT or [ADDR6]:PORT; default 9401 on 127.0.0.1 "
                  "(dcgm-exporter has 9400); 0.0.0.0:9401 or [::]:9401 to serve the network");
  cmd->add_option("--interval", o.interval_ms, "Sampling period in ms (default 100)");
  cmd->add_option("--gpus", o.gpus, "GPU indices to watch, e.g. 0,1 (default all)");
  cmd->add_option(
      "--source", o.source,
      "nvml (default), fake:TRACE.csv (fake:h200/gemm_sustained: a shipped one), hwmon[:ROOT] or "
      "sim:PROFILE (a simulated GPU running the LM head)");
  output(cmd->add_option("--textfile", o.out_textfile, "Also keep a file for node_exporter"));
  cmd->callback([] { exit_code() = run_monitor(o); });
}

}  // namespace powershape::cli
