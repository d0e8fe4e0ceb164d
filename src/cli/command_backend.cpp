#include "command_backend.hpp"

#include <thread>

#include "child.hpp"
#include "powershape/experiment/engine.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/trace/json_codec.hpp"
#include "powershape/trace/open_source.hpp"

namespace powershape::cli {

CommandBackend::CommandBackend(std::vector<std::vector<std::string>> commands,
                               const std::string& source)
    : commands_(std::move(commands)), source_(trace::open_source(source, {})) {
  trace_.source = source_->describe();
  trace_.devices = source_->devices();
  sampler_ =
      std::make_unique<telemetry::Sampler>(*source_, experiment::measurement_sampler_options());
  sampler_->start();
}

CommandBackend::~CommandBackend() { sampler_->stop(); }

std::string CommandBackend::describe() const { return "commands on " + source_->describe(); }

nlohmann::json CommandBackend::device_json() const {
  return {{"simulated", false}, {"device", trace::to_json(source_->devices().at(0))}};
}

std::string CommandBackend::config_name(std::size_t i) const {
  std::string s;
  for (const auto& a : commands_.at(i)) s += (s.empty() ? "" : " ") + a;
  return s;
}

void CommandBackend::drain() {
  for (auto& s : sampler_->take()) trace_.samples.push_back(std::move(s));
}

experiment::Measurement CommandBackend::measure(std::size_t i, double /*seconds*/) {
  const int64_t begin = telemetry::steady_now_ns();
  Child child(commands_.at(i), {});
  forward_signals_to(child.pid());
  while (!child.poll()) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    drain();
  }
  forward_signals_to(0);
  const int64_t end = telemetry::steady_now_ns();
  if (received_signal() != 0) throw std::runtime_error("interrupted");
  if (child.exit_code() != 0) {
    throw std::runtime_error("'" + config_name(i) + "' exited with " +
                             std::to_string(child.exit_code()));
  }
  // The telemetry of the run's end arrives a sampling period later.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  drain();
  experiment::Measurement m;
  m.config = i;
  m.seconds = static_cast<double>(end - begin) * 1e-9;
  m.iterations = 1;
  m.ms_per_iteration = m.seconds * 1e3;
  experiment::add_telemetry(m, trace_, begin, end);
  return m;
}

void CommandBackend::idle(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  drain();
}

std::optional<double> CommandBackend::temperature_c() {
  drain();
  for (auto it = trace_.samples.rbegin(); it != trace_.samples.rend(); ++it) {
    const auto& r = (*it)[telemetry::Signal::kGpuTemp];
    if (r.ok()) return static_cast<double>(r.value);
  }
  return std::nullopt;
}

int64_t CommandBackend::now_ns() const { return telemetry::steady_now_ns(); }

trace::Trace CommandBackend::recorded() {
  drain();
  return trace_;
}

}  // namespace powershape::cli
