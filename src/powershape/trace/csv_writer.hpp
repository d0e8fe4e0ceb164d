#pragma once
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "powershape/trace/trace.hpp"

namespace powershape::trace {

// Writes a trace as CSV while it is being recorded: metadata as '# kind {json}' comment lines,
// one header row (t_ns, gpu, then telemetry::column_name of each signal), one row per sample.
// A reading not taken or failed is an empty cell: the device lines say which signals a GPU does
// not support and events say when a supported one failed, so every column reads as numbers.
// Rows: a poll that repeats the GPU's previous poll in every signal is left out (readings hold
// until the next row, so summaries do not change), except one a second, which keeps a stalled
// stretch's length, and the last, written by finish(); every_row keeps them all. Every call
// flushes, so a signal that stops the process loses at most that second's repeats.
class CsvWriter {
 public:
  // Throws std::runtime_error naming the path when it cannot be opened.
  explicit CsvWriter(const std::string& path, bool every_row = false);
  ~CsvWriter();  // finish(), errors swallowed
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  void header(const std::string& source, const std::vector<DeviceInfo>& devices);
  void samples(const std::vector<Sample>& rows);
  void region(const Region& r);
  void event(const Event& e);
  void process(const ProcessSample& p);
  // The wall-clock anchor (Trace::wall_minus_steady_ns) and the start it implies, in UTC.
  void clock(int64_t wall_minus_steady_ns, int64_t first_t_ns);
  // Writes each GPU's last left-out row, if any.
  void finish();
  void flush();
  // The last failure was EPIPE: the reader of a pipe went (`-o - | head`), not a lost disk.
  bool reader_gone() const { return reader_gone_; }

 private:
  struct Held {
    Sample written;                // the GPU's last poll row in the file
    std::optional<Sample> repeat;  // a later poll equal to it, left out so far
  };
  void row(const Sample& s);

  std::FILE* f_ = nullptr;
  std::string path_;
  bool every_row_ = false;
  bool reader_gone_ = false;
  std::map<int, Held> held_;
};

// Writes a whole trace at once.
void write_csv(const std::string& path, const Trace& trace, bool every_row = false);

}  // namespace powershape::trace
