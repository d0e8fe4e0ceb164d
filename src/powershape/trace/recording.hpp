#pragma once
// A live recording: what a sampler collects moves into one Trace (in memory) and, when a CSV
// writer is given, into the CSV file as it arrives. When the file fails (a full disk, a removed
// mount), the recording goes on in memory: one warning, and what is in memory is not lost.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "powershape/telemetry/control_fifo.hpp"
#include "powershape/telemetry/mark.hpp"
#include "powershape/telemetry/region.hpp"
#include "powershape/telemetry/sampler.hpp"
#include "powershape/trace/csv_writer.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::trace {

using Warn = std::function<void(const std::string&)>;

class Recording {
 public:
  // `csv` may be null; `warn` receives the file's failure and the sampler's events.
  Recording(telemetry::Sampler& sampler, Trace& trace, CsvWriter* csv, Warn warn);
  // Moves the sampler's rows, regions and events into the trace and the file.
  void drain();
  // Writes the file's last rows (those that repeated the ones before).
  void finish();
  bool file_failed() const { return failed_; }
  bool reader_gone() const { return reader_gone_; }  // the CSV's pipe lost its reader

 private:
  template <class F>
  void to_csv(F&& write);
  telemetry::Sampler& sampler_;
  Trace& trace_;
  CsvWriter* csv_;
  Warn warn_;
  bool failed_ = false, reader_gone_ = false;
};

// The region marks that arrive on a recorder's control FIFO, applied to its sampler. A malformed
// line, a bad name, an end without a begin, a region dropped past RegionStack::kMaxOpen and a mark
// that cannot be passed on are each reported to `warn` the first time, once a reader (so a job
// that writes garbage in a loop costs one line). `forward_to` non-empty: each mark applied is sent
// on to that FIFO too (an enclosing recorder's: `monitor` or `optimize` around `smooth` sees the
// job's regions).
class MarkReader {
 public:
  MarkReader(Warn warn, std::string forward_to = "");
  // Applies what has arrived; returns the regions its end marks closed.
  std::vector<telemetry::Region> apply(telemetry::ControlFifo& fifo, telemetry::Sampler& sampler);
  // Regions begun here that end here without an end mark (dropped with a run, closed at the end
  // of a recording): their begins were passed on, so the enclosing recorder is sent their ends at
  // t_ns.
  void end_forwarded(const std::vector<telemetry::Region>& dropped, int64_t t_ns);

 private:
  enum Said { kMalformed, kBadName, kNeverBegan, kDropped, kNotPassedOn, kKinds };
  void say(Said kind, const std::string& what);
  void forward(const telemetry::Mark& m);
  Warn warn_;
  std::string forward_to_;
  bool said_[kKinds] = {};
};

// Lets go of what a days-long recording no longer needs: samples and process samples older than
// `before_ns`, and all
// but the last `keep` regions and events.
void forget_before(Trace& t, int64_t before_ns, std::size_t keep = 1000);

}  // namespace powershape::trace
