#pragma once
// One "telemetry around a program": a sampler on a source, a command run with the marks FIFO in
// its environment (its regions recorded), the readings moved into a Trace and, when asked, into a
// CSV as they arrive. `monitor`, `exporter` and `smooth` each run one; what they add (a live
// view, /metrics, the filler) happens in the turn callback. The command backend (compare, tune,
// advise --sweep, optimize) runs its commands one after another in one (run_command). Run under
// another recorder (its $POWERSHAPE_CONTROL set), a session passes the command's marks on to it.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "powershape/telemetry/control_fifo.hpp"
#include "powershape/telemetry/sampler.hpp"
#include "powershape/telemetry/source.hpp"
#include "powershape/telemetry/update_periods.hpp"
#include "powershape/trace/csv_writer.hpp"
#include "powershape/trace/recording.hpp"
#include "powershape/trace/trace.hpp"
#include "powershape/util/child.hpp"

namespace powershape::monitor {

struct SessionOptions {
  telemetry::SamplerOptions sampler;
  std::string csv_path;    // empty: no CSV
  bool every_row = false;  // the CSV keeps polls that repeat the one before
  // The command, run with $POWERSHAPE_CONTROL naming the marks FIFO; empty: record until a
  // SIGINT or SIGTERM.
  std::vector<std::string> command;
  // The longest wait for a mark between two turns, in ms (1-1000).
  int turn_ms = 50;
  // The command leads a process group of its own (util::Child): hold() and the forwarded signals
  // reach all it started. Not for a command that reads the terminal.
  bool own_group = false;
  // The regions of marks and of the source (a replay's, the simulator's) go into the trace (and
  // the CSV); false: none do (the command backend, which takes a run's marks from run_command and
  // places regions of its own).
  bool regions_in_trace = true;
};

// Periods that keep a recording's cost and its memory bounded, and its readings useful: the
// interval from 0.1 ms to a minute, the slow one from it to a minute (NaN neither). Throws naming
// "interval" or "slow-interval"; a Session checks its own, set_periods before converting them.
void check_periods(double interval_ms, double slow_interval_ms);
void set_periods(SessionOptions& o, double interval_ms, double slow_interval_ms);

class Session {
 public:
  // Opens the CSV (if any) and the FIFO; starts nothing. Throws on a file it cannot write.
  Session(telemetry::Source& source, SessionOptions o, trace::Warn warn);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts the sampler (if not yet), then the command; SIGINT and SIGTERM go to the command.
  // Returns false, with the reason given to warn, when the command cannot be started (the exit
  // code is then 127).
  bool start();
  // Starts the sampler alone: turns before the command (a ramp that must come first).
  void start_sampler();
  // One turn: waits for marks (at most `wait_ms`), applies them and moves the readings into the
  // trace.
  void turn(int wait_ms);
  // Runs until the command exits or a signal arrives, a turn of at most turn_ms at a time, calling
  // `each_turn` after each.
  void run(const std::function<void()>& each_turn = {});
  // Holds the command (SIGSTOP; its group with own_group) or lets it go on (SIGCONT); nothing
  // without a running command. A signal that stops the session lets it go on.
  void hold(bool held);
  bool held() const { return held_; }
  // Whether the command (or, without one, the session) has been told to stop by a signal.
  bool signalled() const;
  // Whether a region of that name is open now.
  bool region_open(const std::string& name) const { return sampler_->is_open(name); }
  // What run_command gives back.
  struct CommandRun {
    int exit_code = 0;
    int64_t begin_ns = 0, end_ns = 0;  // steady clock: from its start to when it was seen to end
    int64_t stopped_ns = 0;            // when the deadline stopped it; 0: it ended on its own
    std::vector<telemetry::Region> regions;  // those it closed, the latest max_regions
  };
  // Runs one more command to its end under this session's sampler (started if not yet), for a
  // session of many measured runs (experiment::CommandBackend): the marks FIFO in its
  // environment, a process group of its own (SIGINT and SIGTERM forwarded to it, all it left
  // behind killed when it ends), a turn on each mark and at its end. Past deadline_ns (steady
  // clock; 0: none) it gets SIGTERM, and SIGKILL 2 s later. Its regions are the marks it closed,
  // returned, at most max_regions (the latest; at most twice that held at any time); one it left
  // open is dropped (an enclosing recorder is sent its end). Throws when it cannot be started.
  CommandRun run_command(const std::vector<std::string>& command, int64_t deadline_ns,
                         std::size_t max_regions);

  // Stops the sampler, closes the regions left open (each named to warn), moves the last readings
  // in, and returns the exit code: the command's, 128 + the signal that ended a recording without
  // one, 127 when the command never started.
  int finish();

  trace::Trace& trace() { return trace_; }
  const trace::Trace& trace() const { return trace_; }
  // How the sampler kept up (rounds, late, dropped, its CPU), and each GPU's signals' update
  // periods as seen: for the end-of-run lines.
  telemetry::SamplerStats sampler_stats() const { return sampler_->stats(); }
  std::vector<telemetry::UpdatePeriods> update_periods() const;
  const telemetry::Source& source() const { return source_; }
  const std::string& fifo_path() const { return fifo_.path(); }
  bool has_command() const { return !o_.command.empty(); }
  // The CSV failed at some point: the rows since are in memory only.
  bool file_failed() const { return recording_->file_failed(); }
  // The CSV went to a pipe whose reader went (EPIPE).
  bool reader_gone() const { return reader_gone_ || recording_->reader_gone(); }

 private:
  telemetry::Source& source_;
  SessionOptions o_;
  trace::Warn warn_;
  trace::Trace trace_;
  std::unique_ptr<trace::CsvWriter> csv_;
  telemetry::ControlFifo fifo_;
  std::unique_ptr<telemetry::Sampler> sampler_;
  std::unique_ptr<trace::Recording> recording_;
  std::optional<util::Child> child_;
  bool started_ = false, failed_to_start_ = false, finished_ = false, held_ = false,
       reader_gone_ = false;
  int code_ = 0;
  // An enclosing recorder's FIFO ($POWERSHAPE_CONTROL when this session began): marks go on there.
  std::string outer_control_;
  std::unique_ptr<trace::MarkReader> marks_;
  std::vector<telemetry::Region>* marked_to_ = nullptr;  // run_command's: the regions marks close
};

}  // namespace powershape::monitor
