#pragma once
#include <cstdio>
#include <string>

#include "powershape/trace/trace.hpp"

namespace powershape::trace {

// Writes a trace as CSV while it is being recorded: metadata as '# kind {json}' comment lines,
// one header row with the unit of each column, one row per sample. Every call flushes, so a
// signal that stops the process loses nothing already written.
class CsvWriter {
 public:
  // Throws std::runtime_error naming the path when it cannot be opened.
  explicit CsvWriter(const std::string& path);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  void header(const std::string& source, const std::vector<DeviceInfo>& devices);
  void samples(const std::vector<Sample>& rows);
  void region(const Region& r);
  void event(const Event& e);
  // The wall-clock anchor (Trace::wall_minus_steady_ns) and the start it implies, in UTC.
  void clock(int64_t wall_minus_steady_ns, int64_t first_t_ns);
  void flush();

 private:
  std::FILE* f_ = nullptr;
  std::string path_;
};

// Writes a whole trace at once.
void write_csv(const std::string& path, const Trace& trace);

}  // namespace powershape::trace
