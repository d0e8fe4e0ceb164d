#include "powershape/trace/csv_writer.hpp"

#include <cerrno>
#include <cstring>
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

void write_csv(const std::string& path, const Trace& trace) {
  CsvWriter w(path);
  w.header(trace.source, trace.devices);
  w.samples(trace.samples);
  for (const auto& r : trace.regions) w.region(r);
  for (const auto& e : trace.events) w.event(e);
}

}  // namespace powershape::trace
