#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "powershape/analysis/energy.hpp"
#include "powershape/analysis/series.hpp"

namespace powershape::analysis {

// What a GPU did over one window: the whole recording or one region.
struct Summary {
  std::string name;  // "all" or the region's name
  int gpu = 0;
  int64_t begin_ns = 0, end_ns = 0;
  Energy energy;
  std::optional<double> avg_power_w;   // energy / duration
  std::optional<double> peak_power_w;  // highest instantaneous, driver-buffer or usage reading
  Distribution sm_clock_mhz;
  // Time-weighted fraction of the window with each clock-event reason bit set (reason::kAll order);
  // empty when the source has no reasons.
  std::vector<std::pair<std::string, double>> reason_fraction;
  // From the driver's cumulative throttle-time counters, when present: ns held back / window.
  std::optional<double> throttle_sw_power_fraction;
  std::optional<double> throttle_thermal_fraction;
  std::optional<int64_t> peak_temp_c;

  double duration_s() const { return static_cast<double>(end_ns - begin_ns) * 1e-9; }
  std::optional<double> reason(std::string_view name) const;
  // Fraction power-capped / thermally throttled: from the reason bits, else from the counters.
  std::optional<double> power_capped_fraction() const;
  std::optional<double> thermal_fraction() const;
};

Summary summarize(const trace::Trace& t, int gpu, const std::string& name, int64_t from_ns,
                  int64_t to_ns);
// The whole recording of each GPU, then every region on every GPU it covers.
std::vector<Summary> summarize(const trace::Trace& t);

nlohmann::json to_json(const Summary& s);
nlohmann::json to_json(const std::vector<Summary>& s);

}  // namespace powershape::analysis
