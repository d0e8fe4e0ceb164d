#include "powershape/trace/csv_writer.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "powershape/telemetry/clock.hpp"
#include "powershape/trace/json_codec.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/output_file.hpp"
#include "powershape/util/stdout_data.hpp"

namespace powershape::trace {

namespace {

constexpr int64_t kKeepEveryNs = 1'000'000'000;  // a repeated row is still written once a second

// A row of the driver's power buffer carries that signal alone; such rows are never left out.
bool is_poll(const Sample& s) {
  for (std::size_t i = 0; i < telemetry::kSignalCount; ++i) {
    if (i != static_cast<std::size_t>(telemetry::Signal::kDriverPower) && s.readings[i].ok())
      return true;
  }
  return false;
}

}  // namespace

CsvWriter::CsvWriter(const std::string& path, bool every_row) : path_(path), every_row_(every_row) {
  const int fd = util::is_stdout(path) ? dup(fileno(util::data_stdout()))
                                       : util::open_output(path, /*truncate=*/true);
  f_ = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (f_ == nullptr) {
    const int err = errno;
    if (fd >= 0) close(fd);
    throw write_failed(path, err);
  }
}

CsvWriter::~CsvWriter() {
  try {
    finish();
  } catch (const std::exception&) {  // a destructor reports nothing; finish() said it if called
  }
  if (f_ != nullptr) std::fclose(f_);
}

void CsvWriter::finish() {
  for (auto& [gpu, h] : held_) {
    if (!h.repeat) continue;
    h.written = *h.repeat;
    h.repeat.reset();
    row(h.written);
  }
  flush();
}

void CsvWriter::flush() {
  if (std::fflush(f_) == 0) return;
  const int err = errno;
  reader_gone_ = err == EPIPE;
  throw write_failed(util::is_stdout(path_) ? "standard output" : path_, err);
}

void CsvWriter::header(const std::string& source, const std::vector<DeviceInfo>& devices) {
  std::fprintf(f_, "# powershape trace v2\n# source %s\n", nlohmann::json(source).dump().c_str());
  for (const auto& d : devices) std::fprintf(f_, "# device %s\n", to_json(d).dump().c_str());
  std::fputs("t_ns,gpu", f_);
  for (const auto& s : telemetry::signal_specs())
    std::fprintf(f_, ",%s", telemetry::column_name(s.signal).c_str());
  std::fputc('\n', f_);
  flush();
}

void CsvWriter::row(const Sample& s) {
  std::fprintf(f_, "%lld,%d", static_cast<long long>(s.t_ns), s.gpu);
  for (const auto& r : s.readings) {
    if (r.ok()) {
      std::fprintf(f_, ",%lld", static_cast<long long>(r.value));
    } else {
      std::fputc(',', f_);
    }
  }
  std::fputc('\n', f_);
}

void CsvWriter::samples(const std::vector<Sample>& rows) {
  for (const Sample& s : rows) {
    if (every_row_ || !is_poll(s)) {
      row(s);
      continue;
    }
    auto [it, fresh] = held_.try_emplace(s.gpu);
    Held& h = it->second;
    if (!fresh && s.readings == h.written.readings && s.t_ns - h.written.t_ns < kKeepEveryNs) {
      h.repeat = s;
      continue;
    }
    h.written = s;
    h.repeat.reset();
    row(s);
  }
  flush();
}

void CsvWriter::region(const Region& r) {
  std::fprintf(f_, "# region %s\n", to_json(r).dump().c_str());
  flush();
}

void CsvWriter::event(const Event& e) {
  std::fprintf(f_, "# event %s\n", to_json(e).dump().c_str());
  flush();
}

void CsvWriter::process(const ProcessSample& p) {
  std::fprintf(f_, "# process %s\n", to_json(p).dump().c_str());
  flush();
}

void CsvWriter::clock(int64_t wall_minus_steady_ns, int64_t first_t_ns) {
  nlohmann::json j = {{"wall_minus_steady_ns", wall_minus_steady_ns},
                      {"start_utc", telemetry::utc_iso(first_t_ns + wall_minus_steady_ns)}};
  std::fprintf(f_, "# clock %s\n", j.dump().c_str());
  flush();
}

void write_csv(const std::string& path, const Trace& trace, bool every_row) {
  CsvWriter w(path, every_row);
  w.header(trace.source, trace.devices);
  if (trace.wall_minus_steady_ns != 0)
    w.clock(trace.wall_minus_steady_ns, trace.samples.empty() ? 0 : trace.samples.front().t_ns);
  w.samples(trace.samples);
  for (const auto& r : trace.regions) w.region(r);
  for (const auto& e : trace.events) w.event(e);
  w.finish();
}

}  // namespace powershape::trace
