#pragma once
// The Jetson study's idea: from a short profiling run at the setting as found, predict the
// energy-optimal SM clock without sweeping it. Features a trace alone gives (so the same model
// serves a simulated run and a GPU's monitor trace); the target, the optimal clock cap as a share
// of the maximum; a ridge regression (Eigen) on the features and their squares, trained on
// simulated exhaustive sweeps over the profiles and workload families.
#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "powershape/trace/trace.hpp"

namespace powershape::advise {

inline constexpr std::size_t kFeatureCount = 7;

struct Features {
  // Shares of the run's time: compute-bound, memory-bound, bursty windows (idle the rest).
  double compute = 0, memory = 0, bursty = 0;
  double power_share = 0;  // busy windows' mean power / the power limit
  double clock_share = 0;  // busy windows' mean reported clock / the maximum
  double capped = 0;       // busy time at the power cap
  double util_mem = 0;     // busy windows' memory utilisation / 100 (0 where not reported)
  std::array<double, kFeatureCount> values() const;
  static const std::array<const char*, kFeatureCount>& names();
};

// From GPU `gpu` of a trace of a short run as found (0.25 s windows). Throws std::runtime_error
// when it has no busy window.
Features features_of(const trace::Trace& t, int gpu, double power_limit_w, double max_mhz);

class Selector {
 public:
  // Trained on features and the optimal clock share of each run; ridge penalty `lambda` on the
  // standardised terms. Throws std::invalid_argument with fewer runs than terms.
  static Selector train(const std::vector<Features>& x, const std::vector<double>& clock_share,
                        double lambda = 0.1);
  // The predicted optimal clock share, within [lo, 1].
  double predict(const Features& f) const;
  nlohmann::json to_json() const;
  // Throws std::runtime_error naming what is missing or malformed.
  static Selector from_json(const nlohmann::json& j);

 private:
  std::vector<double> mean_, scale_, weights_;  // per term; weights_ has the intercept last
  double lo_ = 0.3;
};

// The shipped model (models/advise_selector.json under the share folder), or the file at path.
Selector load_selector(const std::string& path = "");

}  // namespace powershape::advise
