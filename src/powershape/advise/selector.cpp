#include "powershape/advise/selector.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "powershape/analysis/phases.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/share_dir.hpp"

namespace powershape::advise {
using analysis::PhaseClass;

std::array<double, kFeatureCount> Features::values() const {
  return {compute, memory, bursty, power_share, clock_share, capped, util_mem};
}

const std::array<const char*, kFeatureCount>& Features::names() {
  static const std::array<const char*, kFeatureCount> n = {
      "compute", "memory", "bursty", "power_share", "clock_share", "capped", "util_mem"};
  return n;
}

Features features_of(const trace::Trace& t, int gpu, double power_limit_w, double max_mhz) {
  if (!(power_limit_w > 0 && max_mhz > 0))
    throw invalid_input("features: the power limit and maximum clock must be positive");
  analysis::PhaseOptions o;
  o.window_s = 0.25;
  const auto w = analysis::classify_phases(t, gpu, o);
  Features f;
  double total = 0, busy = 0, power = 0, clock = 0, capped = 0, util = 0;
  for (const auto& x : w) {
    const double s = x.seconds();
    total += s;
    if (x.cls == PhaseClass::kIdle) continue;
    busy += s;
    (x.cls == PhaseClass::kCompute  ? f.compute
     : x.cls == PhaseClass::kMemory ? f.memory
                                    : f.bursty) += s;
    power += x.power_w * s;
    clock += (x.sm_clock_mhz > 0 ? x.sm_clock_mhz : max_mhz) * s;
    capped += x.power_capped * s;
    util += std::max(0.0, x.util_mem_pct) / 100 * s;
  }
  if (busy <= 0) throw invalid_input("features: the run has no busy window");
  f.compute /= total;
  f.memory /= total;
  f.bursty /= total;
  f.power_share = power / busy / power_limit_w;
  f.clock_share = clock / busy / max_mhz;
  f.capped = capped / busy;
  f.util_mem = util / busy;
  return f;
}

namespace {

// The terms: each feature and its square.
std::vector<double> terms(const Features& f) {
  std::vector<double> out;
  for (double v : f.values()) out.push_back(v);
  for (double v : f.values()) out.push_back(v * v);
  return out;
}

}  // namespace

Selector Selector::train(const std::vector<Features>& x, const std::vector<double>& y,
                         double lambda) {
  const std::size_t n = x.size(), k = 2 * kFeatureCount;
  if (n != y.size() || n < k + 1)
    throw invalid_input("selector: need as many targets as runs, and more runs (" +
                        std::to_string(n) + ") than terms (" + std::to_string(k) + ")");
  Selector s;
  s.mean_.assign(k, 0);
  s.scale_.assign(k, 0);
  std::vector<std::vector<double>> rows;
  for (const auto& f : x) rows.push_back(terms(f));
  for (std::size_t j = 0; j < k; ++j) {
    for (const auto& r : rows) s.mean_[j] += r[j] / static_cast<double>(n);
    for (const auto& r : rows)
      s.scale_[j] += std::pow(r[j] - s.mean_[j], 2) / static_cast<double>(n);
    s.scale_[j] = std::sqrt(s.scale_[j]);
    if (s.scale_[j] < 1e-12) s.scale_[j] = 1;  // a constant term carries nothing
  }
  Eigen::MatrixXd a(n, k + 1);
  Eigen::VectorXd b(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < k; ++j)
      a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) =
          (rows[i][j] - s.mean_[j]) / s.scale_[j];
    a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) = 1;
    b(static_cast<Eigen::Index>(i)) = y[i];
  }
  Eigen::MatrixXd reg = Eigen::MatrixXd::Identity(k + 1, k + 1) * lambda * static_cast<double>(n);
  reg(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k)) = 0;  // the intercept is free
  const Eigen::VectorXd w = (a.transpose() * a + reg).ldlt().solve(a.transpose() * b);
  s.weights_.assign(w.data(), w.data() + w.size());
  return s;
}

double Selector::predict(const Features& f) const {
  const auto t = terms(f);
  double y = weights_.back();
  for (std::size_t j = 0; j < t.size(); ++j) y += weights_[j] * (t[j] - mean_[j]) / scale_[j];
  return std::clamp(y, lo_, 1.0);
}

nlohmann::json Selector::to_json() const {
  nlohmann::json j;
  j["model"] =
      "ridge regression of the energy-optimal clock cap / maximum clock on the features "
      "and their squares (standardised)";
  j["features"] = Features::names();
  j["mean"] = mean_;
  j["scale"] = scale_;
  j["weights"] = weights_;
  j["lowest"] = lo_;
  return j;
}

Selector Selector::from_json(const nlohmann::json& j) {
  const std::size_t k = 2 * kFeatureCount;
  auto vec = [&](const char* key, std::size_t size) {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_array() || j.at(key).size() != size)
      throw invalid_input(std::string("selector: '") + key + "' must be a list of " +
                          std::to_string(size) + " numbers");
    std::vector<double> out;
    for (const auto& v : j.at(key)) {
      if (!v.is_number() || !std::isfinite(v.get<double>()))
        throw invalid_input(std::string("selector: '") + key + "' holds a non-number");
      out.push_back(v.get<double>());
    }
    return out;
  };
  Selector s;
  s.mean_ = vec("mean", k);
  s.scale_ = vec("scale", k);
  s.weights_ = vec("weights", k + 1);
  for (double v : s.scale_)
    if (!(v > 0)) throw invalid_input("selector: 'scale' must be positive");
  s.lo_ = j.value("lowest", 0.3);
  return s;
}

Selector load_selector(const std::string& path) {
  const std::string p = path.empty() ? util::share_dir() + "/models/advise_selector.json" : path;
  return util::read_as(p, [](const nlohmann::json& j) { return Selector::from_json(j); });
}

}  // namespace powershape::advise
