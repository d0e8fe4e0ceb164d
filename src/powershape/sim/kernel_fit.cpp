#include "powershape/sim/kernel_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "powershape/sim/simulator.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/steps.hpp"

namespace powershape::sim {
namespace {

workload::Phase from_fields(const workload::KernelTime& k) {
  workload::Phase ph;
  ph.name = k.name;
  ph.bytes = k.bytes;
  if (k.m > 0 && k.n > 0 && k.k > 0) {
    const double m = static_cast<double>(k.m), n = static_cast<double>(k.n),
                 kk = static_cast<double>(k.k);
    ph.kind = workload::PhaseKind::kCompute;
    ph.flops = 2 * m * n * kk;
    ph.efficiency = workload::product_k_efficiency(kk);
    ph.m = k.m;
    ph.n = k.n;
    ph.k = k.k;
    ph.result_bytes = std::max(0.0, k.bytes - workload::product_bytes(m, n, kk, 0, false));
  } else {
    ph.kind = workload::PhaseKind::kMemory;
  }
  return ph;
}

// The phase each recorded kernel ran, from its own fields, with what only its configuration's
// plan knows (the rows a softmax reads again) where the configuration's name gives the plan.
std::vector<workload::Phase> phases_of(const Profile& p,
                                       const std::vector<workload::KernelTime>& ks) {
  std::map<std::string, std::vector<workload::Phase>> plans;  // each config's kernels, in order
  std::vector<workload::Phase> out;
  for (const auto& k : ks) {
    auto it = plans.find(k.config);
    if (it == plans.end()) {
      std::vector<workload::Phase> kernels;
      if (const auto w = workload::workload_named(k.config)) {
        for (auto& ph :
             workload::make_plan(*w, {p.peak_flops_per_s(), p.peak_bytes_per_s()}).phases)
          if (ph.kind != workload::PhaseKind::kIdle) kernels.push_back(std::move(ph));
      }
      it = plans.emplace(k.config, std::move(kernels)).first;
    }
    out.push_back(from_fields(k));
    const auto i = static_cast<std::size_t>(k.index);
    if (i < it->second.size() && it->second[i].name == k.name) {
      out.back().reread_bytes = it->second[i].reread_bytes;
      out.back().row_bytes = it->second[i].row_bytes;
    }
  }
  return out;
}

// The clock the kernel ran at: the clock probe's where the recording has it (NVML's mean over
// the configuration reads the LM head's products ~100 MHz high, and its memory kernels as low),
// else NVML's, else the maximum.
double clock_of(const Profile& p, const workload::KernelTime& k) {
  const double mhz = k.real_mhz > 0 ? k.real_mhz : k.sm_clock_mhz;
  return mhz > 0 ? std::clamp(mhz, p.min_mhz, p.max_mhz) : p.max_mhz;
}

double ms_of(const Profile& p, const workload::KernelTime& k, const workload::Phase& ph) {
  return phase_seconds(p, ph, clock_of(p, k)) * 1e3;
}

std::vector<Target> per_config(const Profile& p, const std::vector<workload::KernelTime>& ks,
                               const std::vector<workload::Phase>& phases) {
  std::map<std::string, std::pair<double, double>> sums;  // measured, simulated
  std::vector<std::string> order;
  for (std::size_t i = 0; i < ks.size(); ++i) {
    const auto& k = ks[i];
    if (!sums.count(k.config)) order.push_back(k.config);
    sums[k.config].first += k.ms;
    sums[k.config].second += ms_of(p, k, phases[i]);
  }
  std::vector<Target> out;
  for (const auto& c : order) out.push_back({c + " kernels ms", sums[c].first, sums[c].second});
  return out;
}

// Least squares of ms = a + b x bytes; false when the sizes do not vary.
bool line_fit(const std::vector<std::pair<double, double>>& xy, double& a, double& b) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto [x, y] : xy) {
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double det = n * sxx - sx * sx;
  if (n < 3 || !(det > 1e-12 * n * sxx)) return false;
  b = (n * sxy - sx * sy) / det;
  a = (sy - b * sx) / n;
  return b > 0;
}

}  // namespace

double kernel_ms(const Profile& p, const workload::KernelTime& k) {
  return ms_of(p, k, phases_of(p, {k}).front());
}

KernelFit fit_kernels(Profile& p, const std::vector<workload::KernelTime>& ks) {
  if (ks.empty()) throw invalid_input("kernels.csv: no kernels to fit");
  KernelFit f;
  const std::vector<workload::Phase> phases = phases_of(p, ks);
  f.before = per_config(p, ks, phases);
  // Memory kernels: ms against bytes per kernel name, over the sizes the chunk counts give. The
  // intercept is the kernel's fixed cost, the slope its bandwidth.
  std::map<std::string, std::vector<std::pair<double, double>>> by_name;
  for (std::size_t i = 0; i < ks.size(); ++i) {
    const auto& k = ks[i];
    if (k.m == 0 && k.bytes > 0) {
      const double slow =
          1 - p.mem_clock_sensitivity + p.mem_clock_sensitivity * clock_of(p, k) / p.max_mhz;
      by_name[k.name].push_back({memory_bytes(p, phases[i]) / slow, k.ms});
    }
  }
  std::vector<double> launches;
  p.memory_efficiency.clear();
  const double bw = p.mem_bandwidth_gbs * 1e9;
  const auto& known = workload::memory_kernel_names();
  for (const auto& [name, xy] : by_name) {
    // A profile gives efficiencies to the built-in workloads' kernels alone (profile.hpp).
    if (std::find(known.begin(), known.end(), name) == known.end()) continue;
    double a = 0, b = 0, largest = 0;
    for (auto [x, y] : xy) largest = std::max(largest, x);
    // A kernel that never moves 64 MB is all fixed cost: its slope says nothing of bandwidth.
    if (largest < 64e6 || !line_fit(xy, a, b)) continue;
    launches.push_back(std::max(a, 0.0));
    const double eff = 1e3 / (b * bw);  // b: ms a byte
    if (eff < 0.98) p.memory_efficiency.emplace_back(name, std::clamp(eff, 0.01, 1.0));
  }
  if (!launches.empty()) {
    std::sort(launches.begin(), launches.end());
    p.kernel_launch_us = std::clamp(launches[launches.size() / 2] * 1e3, 0.0, 1000.0);
  }
  // Products: up to which k a product's epilogue shows and at what share of the bandwidth, and
  // how much of a partial wave's idle share they pay, by the log error over every recorded
  // product. A grid (epilogue k 0 and 16 to 65536 in 2^(1/4) steps, the shares in tenths): the
  // error is not smooth in any of them.
  std::vector<std::size_t> products;
  for (std::size_t i = 0; i < ks.size(); ++i)
    if (ks[i].m > 0) products.push_back(i);
  double best = 1e300, best_k = 0, best_q = 0, best_ee = 1;
  for (int ee = 5; ee <= 10; ++ee) {
    p.epilogue_efficiency = ee / 10.0;
    for (int q = 0; q <= 10; ++q) {
      p.wave_quantization = q / 10.0;
      for (int i = -1; i <= 48; ++i) {
        p.epilogue_k = i < 0 ? 0 : 16 * std::pow(2.0, i / 4.0);
        double e = 0;
        for (const std::size_t j : products) {
          const double d = std::log(ms_of(p, ks[j], phases[j]) / ks[j].ms);
          e += d * d;
        }
        if (e < best) {
          best = e;
          best_k = p.epilogue_k;
          best_q = p.wave_quantization;
          best_ee = p.epilogue_efficiency;
        }
      }
    }
  }
  p.epilogue_k = best_k;
  p.wave_quantization = best_q;
  p.epilogue_efficiency = best_ee;
  f.after = per_config(p, ks, phases);
  return f;
}

}  // namespace powershape::sim
