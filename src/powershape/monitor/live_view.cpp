#include "powershape/monitor/live_view.hpp"

namespace powershape::monitor {

using telemetry::Signal;

std::vector<std::string> LiveView::lines(const trace::Trace& t) {
  std::map<int, std::map<Signal, int64_t>> latest;
  for (const auto& s : t.samples) {
    for (std::size_t i = 0; i < telemetry::kSignalCount; ++i) {
      if (!s.readings[i].ok()) continue;
      const auto sig = static_cast<Signal>(i);
      latest[s.gpu][sig] = s.readings[i].value;
      if (sig == Signal::kEnergy) first_energy_.try_emplace(s.gpu, s.readings[i].value);
    }
  }
  std::vector<std::string> out;
  for (const auto& d : t.devices) {
    const auto& v = latest[d.index];
    auto has = [&](Signal s) { return v.count(s) > 0; };
    char buf[256];
    std::string line = "GPU " + std::to_string(d.index);
    const Signal power = has(Signal::kPowerInstant) ? Signal::kPowerInstant : Signal::kPowerUsage;
    if (has(power)) {
      std::snprintf(buf, sizeof buf, "  %5.0f", static_cast<double>(v.at(power)) * 1e-3);
      line += buf;
      if (d.enforced_power_limit_mw.ok()) {
        std::snprintf(buf, sizeof buf, " / %.0f",
                      static_cast<double>(d.enforced_power_limit_mw.value) * 1e-3);
        line += buf;
      }
      line += " W";
    } else {
      line += "      - W";
    }
    std::snprintf(buf, sizeof buf, "  %5s MHz  %3s C",
                  has(Signal::kSmClock) ? std::to_string(v.at(Signal::kSmClock)).c_str() : "-",
                  has(Signal::kGpuTemp) ? std::to_string(v.at(Signal::kGpuTemp)).c_str() : "-");
    line += buf;
    if (has(Signal::kEnergy)) {
      std::snprintf(buf, sizeof buf, "  %9.1f J",
                    static_cast<double>(v.at(Signal::kEnergy) - first_energy_[d.index]) * 1e-3);
      line += buf;
    }
    std::string reasons;
    if (has(Signal::kReasons)) {
      for (const auto& r : telemetry::reason::kAll) {
        if ((static_cast<uint64_t>(v.at(Signal::kReasons)) & r.bit) != 0)
          reasons += (reasons.empty() ? "" : ",") + std::string(r.name);
      }
    }
    line += "  " + (reasons.empty() ? std::string("-") : reasons);
    out.push_back(line);
  }
  return out;
}

void LiveView::show(std::FILE* out, const trace::Trace& t) {
  const auto now = lines(t);
  if (terminal_ && shown_ > 0) std::fprintf(out, "\x1b[%dA", shown_);  // back to the first line
  for (const auto& l : now) std::fprintf(out, terminal_ ? "\x1b[2K%s\n" : "%s\n", l.c_str());
  shown_ = static_cast<int>(now.size());
  std::fflush(out);
}

}  // namespace powershape::monitor
