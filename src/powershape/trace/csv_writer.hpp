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
  void flush();

 private:
  std::FILE* f_ = nullptr;
  std::string path_;
};

// Writes a whole trace at once.
void write_csv(const std::string& path, const Trace& trace);

}  // namespace powershape::trace
