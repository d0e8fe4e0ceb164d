#include "powershape/analysis/step_response.hpp"

#include "powershape/analysis/series.hpp"

namespace powershape::analysis {

std::optional<double> step_response_ms(const trace::Trace& t, int gpu, int64_t load_mw,
                                       int64_t clock_mhz, int64_t from_ns) {
  auto clock = series(t, gpu, telemetry::Signal::kSmClock);
  auto after = [&](int64_t step_ns) -> std::optional<double> {
    for (const auto& c : clock) {
      if (c.t_ns >= step_ns && c.value < clock_mhz)
        return static_cast<double>(c.t_ns - step_ns) * 1e-6;
    }
    return std::nullopt;
  };
  if (load_mw <= 0) return after(from_ns);
  for (const auto& p : series(t, gpu, telemetry::Signal::kPowerInstant)) {
    if (p.t_ns >= from_ns && p.value >= load_mw) return after(p.t_ns);
  }
  return std::nullopt;
}

}  // namespace powershape::analysis
