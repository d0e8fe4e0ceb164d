#include <cstdio>
#include <string>

#include "error_message.hpp"
#include "powershape/job/monitor_run.hpp"
#include "powershape/monitor/session.hpp"
#include "powershape/util/int_list.hpp"
#include "powershape/util/output_lock.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

struct MonitorOptions {
  job::MonitorRun run;
  std::string gpus;
};

void warn(const std::string& what) { std::fprintf(stderr, "powershape: %s\n", what.c_str()); }

int run_monitor(MonitorOptions& o) {
  job::MonitorRun& r = o.run;
  monitor::check_periods(r.interval_ms, r.slow_interval_ms);  // before anything is claimed
  if (!o.gpus.empty()) r.gpus = util::parse_int_list(o.gpus, "gpus");
  // The outputs, claimed before anything runs: never the --source trace itself, never one path
  // for two, and never a file another monitor is writing.
  const auto claimed =
      util::claim_outputs({{r.csv, "-o", util::OutputLock::Written::kLive},
                           {r.outputs.json, "--json"},
                           {r.outputs.perfetto, "--perfetto"},
                           {r.outputs.report, "--report"}},
                          {r.source.rfind("fake:", 0) == 0 ? r.source.substr(5) : ""});
  // The textfile is rewritten whole each second, by rename: checked, not locked.
  if (!r.textfile.empty())
    util::OutputLock(r.textfile, "--textfile", util::OutputLock::Written::kAtEnd);
  return job::run_monitor(r, stderr, {warn, say_output, "--json", "--tokens-per-step"});
}

}  // namespace

void add_monitor(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "monitor", "Run a command and record GPU telemetry until it exits (or until Ctrl-C)");
  static MonitorOptions o;
  cmd->add_option("--interval", o.run.interval_ms,
                  "Sampling period in ms (default 10): the finest; a signal the driver updates "
                  "less often is read at half its update period, at most every 4 intervals");
  cmd->add_flag("--every-interval", o.run.every_interval,
                "Read every signal every interval, however often the driver updates it");
  cmd->add_option("--slow-interval", o.run.slow_interval_ms,
                  "Shortest period in ms for signals that are expensive to read, such as the "
                  "energy counter on Hopper (~3 ms a read); default 1000, longer where they would "
                  "take over 0.1% of a core (all GPUs together)");
  cmd->add_option("--gpus", o.gpus, "GPU indices to watch, e.g. 0,1 (default all)");
  output(cmd->add_option("-o,--output", o.run.csv, "Write the trace as CSV"));
  cmd->add_flag("--every-row", o.run.every_row,
                "Keep every poll in the CSV (by default a poll equal to the one before is left "
                "out, save one a second: readings hold until the next row)");
  output(cmd->add_option("--json", o.run.outputs.json, "Write metadata and the summary as JSON"));
  output(cmd->add_option(
      "--textfile", o.run.textfile,
      "Keep a Prometheus text file (dcgm-exporter's names) for node_exporter's textfile "
      "collector, rewritten every second"));
  output(
      cmd->add_option("--perfetto", o.run.outputs.perfetto,
                      "Write the trace for Perfetto / chrome://tracing (wall-clock microseconds)"));
  output(cmd->add_option(
      "--report", o.run.outputs.report,
      "Also write the trace and summary as a self-contained HTML page (see report)"));
  cmd->add_option("--prometheus", o.run.prometheus,
                  "Serve /metrics for Prometheus on PORT (loopback), ADDR:PORT or [ADDR6]:PORT "
                  "while recording");
  cmd->add_flag("--live", o.run.live,
                "Show one line per GPU a few times a second: power against the limit, SM clock, "
                "temperature, energy so far and the throttle reasons");
  cmd->add_option(
      "--source", o.run.source,
      "nvml (default), fake:TRACE.csv (fake:h200/gemm_sustained: a shipped one), hwmon[:ROOT] or "
      "sim:PROFILE (a simulated GPU running the LM head)");
  cmd->add_option("--tokens-per-step", o.run.tokens_per_step,
                  "Tokens a step: with the command's steps marked ('step' regions), the energy a "
                  "token")
      ->check(finite_in(1, 1e12));
  cmd->add_option("command", o.run.command, "The command to run, after --");
  cmd->positionals_at_end();
  cmd->callback([] { exit_code() = run_monitor(o); });
}

void add_exporter(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "exporter",
      "Serve GPU telemetry to Prometheus (/metrics, dcgm-exporter's names) until Ctrl-C");
  static MonitorOptions o;
  o.run.prometheus = "9401";
  o.run.interval_ms = 100;
  o.run.keep_s = 300;
  cmd->add_option("--listen", o.run.prometheus,
                  "PORT (on loopback), ADDR:PORT or [ADDR6]:PORT; default 9401 on 127.0.0.1 "
                  "(dcgm-exporter has 9400); 0.0.0.0:9401 or [::]:9401 to serve the network");
  cmd->add_option("--interval", o.run.interval_ms, "Sampling period in ms (default 100)");
  cmd->add_option("--gpus", o.gpus, "GPU indices to watch, e.g. 0,1 (default all)");
  cmd->add_option(
      "--source", o.run.source,
      "nvml (default), fake:TRACE.csv (fake:h200/gemm_sustained: a shipped one), hwmon[:ROOT] or "
      "sim:PROFILE (a simulated GPU running the LM head)");
  output(cmd->add_option("--textfile", o.run.textfile, "Also keep a file for node_exporter"));
  cmd->callback([] { exit_code() = run_monitor(o); });
}

}  // namespace powershape::cli
