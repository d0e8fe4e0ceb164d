#include "powershape/trace/csv_writer.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "powershape/trace/json_codec.hpp"

namespace powershape::trace {

CsvWriter::CsvWriter(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "w");
  if (f_ == nullptr) {
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  }
}

CsvWriter::~CsvWriter() {
  if (f_ != nullptr) std::fclose(f_);
}

void CsvWriter::flush() {
  if (std::fflush(f_) != 0)
    throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
}

void CsvWriter::header(const std::string& source, const std::vector<DeviceInfo>& devices) {
  std::fprintf(f_, "# powershape trace v1\n# source %s\n", nlohmann::json(source).dump().c_str());
  for (const auto& d : devices) std::fprintf(f_, "# device %s\n", to_json(d).dump().c_str());
  std::fputs("t [ns],gpu", f_);
  for (const auto& s : telemetry::signal_specs()) {
    std::fprintf(f_, ",%.*s [%.*s]", static_cast<int>(s.name.size()), s.name.data(),
                 static_cast<int>(s.unit.size()), s.unit.data());
  }
  std::fputc('\n', f_);
  flush();
}

void CsvWriter::samples(const std::vector<Sample>& rows) {
  for (const Sample& s : rows) {
    std::fprintf(f_, "%lld,%d", static_cast<long long>(s.t_ns), s.gpu);
    for (const auto& r : s.readings) {
      if (r.ok()) {
        std::fprintf(f_, ",%lld", static_cast<long long>(r.value));
      } else {
        auto tok = telemetry::status_token(r.status);
        std::fprintf(f_, ",%.*s", static_cast<int>(tok.size()), tok.data());
      }
    }
    std::fputc('\n', f_);
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

void CsvWriter::clock(int64_t wall_minus_steady_ns, int64_t first_t_ns) {
  const int64_t wall = first_t_ns + wall_minus_steady_ns;
  const std::time_t secs = static_cast<std::time_t>(wall / 1'000'000'000);
  char utc[32] = "";
  std::tm tm{};
  if (gmtime_r(&secs, &tm) != nullptr) std::strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
  nlohmann::json j = {{"wall_minus_steady_ns", wall_minus_steady_ns}, {"start_utc", utc}};
  std::fprintf(f_, "# clock %s\n", j.dump().c_str());
  flush();
}

void write_csv(const std::string& path, const Trace& trace) {
  CsvWriter w(path);
  w.header(trace.source, trace.devices);
  if (trace.wall_minus_steady_ns != 0)
    w.clock(trace.wall_minus_steady_ns, trace.samples.empty() ? 0 : trace.samples.front().t_ns);
  w.samples(trace.samples);
  for (const auto& r : trace.regions) w.region(r);
  for (const auto& e : trace.events) w.event(e);
}

}  // namespace powershape::trace
