#pragma once
#include <functional>
#include <istream>
#include <stdexcept>
#include <string>

#include "powershape/trace/trace.hpp"

namespace powershape::trace {

// Reads a trace written by CsvWriter (either version), or a plain telemetry CSV with a time
// column (t_ns, t_ms, t_s; `t` is seconds), an optional `cond` column (runs of equal values become
// regions) and signal columns named as telemetry::column_name does (power_instant_mw, ...), as
// v1 traces did ("power_instant [mW]") or by the short names other tools used (p_mw, pinst_mw,
// p_inst_mw, pavg_mw, sm_mhz, temp_c, reasons). An empty cell is a reading not taken; the
// nvidia-smi tokens ([Not Supported], ...) are read too. A malformed file is rejected with a
// std::runtime_error that names the file, line and column; a last line without its newline that
// does not parse (a recording cut off mid-row) is dropped with an event whose text starts with
// kTornPrefix. A UTF-8 byte-order mark is skipped; a folder is refused by name.
// nvidia-smi's logs (--query-gpu CSV, dmon) are told by their first line and read too
// (nvidia_smi_log.hpp); `in` must be seekable. Signal values are checked: powers, energy and the
// rest are never negative (temperatures may be), none is beyond any GPU (SignalSpec::most: left
// out, with an event), a GPU index lies in 0..kMaxGpus-1, and an energy counter that goes back is
// unwrapped (a wrap continues modulo 2^64, a reset from the new value) and one that leaps faster
// than any GPU draws is not counted, each with an event.
inline constexpr int kMaxGpus = 1024;
inline constexpr const char* kTornPrefix = "the last line is cut off, dropped: ";
Trace read_csv(const std::string& path);
Trace read_csv(std::istream& in, const std::string& name);

// read_csv without the rows in memory: each row goes to `row` as it is read, checked as read_csv
// checks it, except that an energy counter is unwrapped in the file's order (read_csv's when each
// GPU's rows are in time order, as every recorder writes them). Returns the rest of the trace
// (source, devices, regions, events, clock) with no samples. An nvidia-smi log is read whole.
// Throws OutOfOrder where a GPU's energy readings go back in time (unwrapped in the file's order
// they would not be read_csv's).
Trace scan_csv(const std::string& path, const std::function<void(const Sample&)>& row);
struct OutOfOrder : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace powershape::trace
