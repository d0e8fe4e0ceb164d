#include "powershape/sim/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "powershape/sim/simulator.hpp"
#include "powershape/util/error.hpp"

namespace powershape::sim {
namespace {

constexpr double kMinJitter = 1e-6;  // a spread this small keeps the laws continuous
constexpr int kNormalNodes = 48, kStragglerNodes = 16;
constexpr double kMaxWork = 4e9;  // fine samples x quadrature nodes: seconds of CPU at most

double upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// P(slowness > x), and the slowness at which that equals `tail` (bisection: the law is a mixture
// of two normals, monotone in x).
double survival(const FleetOptions& o, double x) {
  const double s = std::max(o.jitter, kMinJitter);
  return (1 - o.straggler_share) * upper_tail((x - 1) / s) +
         o.straggler_share * upper_tail((x - 1 - o.straggler_slowdown) / s);
}

double at_survival(const FleetOptions& o, double tail) {
  const double s = std::max(o.jitter, kMinJitter);
  double lo = 1 - 40 * s, hi = 1 + o.straggler_slowdown + 40 * s;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (survival(o, mid) > tail ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

void check(const FleetOptions& o) {
  auto in = [](double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; };
  if (o.gpus < 1 || o.gpus > 100'000'000) throw invalid_input("gpus", "expected 1 to 1e8");
  if (!in(o.seconds, 1e-3, 86400)) throw invalid_input("seconds", "expected 0.001 to 86400");
  if (!in(o.lead_in_s, 0, 3600) || !in(o.tail_s, 0, 3600))
    throw invalid_input("lead-in and tail", "expected 0 to 3600 s");
  if (!in(o.resolution_s, 1e-4, 10)) throw invalid_input("resolution", "expected 1e-4 to 10 s");
  if (!in(o.allreduce_s, 0, 3600)) throw invalid_input("allreduce", "expected 0 to 3600 s");
  if (!in(o.jitter, 0, 0.3)) throw invalid_input("jitter", "expected 0 to 0.3");
  if (!in(o.straggler_share, 0, 1)) throw invalid_input("straggler share", "expected 0 to 1");
  if (!in(o.straggler_slowdown, 0, 10))
    throw invalid_input("straggler slowdown", "expected 0 to 10");
  if (o.checkpoint_every < 0) throw invalid_input("checkpoint every", "expected 0 or more steps");
  if (!in(o.checkpoint_s, 0, 3600)) throw invalid_input("checkpoint", "expected 0 to 3600 s");
}

}  // namespace

double slowness_quantile(const FleetOptions& o, double q) { return at_survival(o, 1 - q); }

double slowest_of(const FleetOptions& o, double u) {
  // P(max <= x) = F(x)^N = u, so 1 - F(x) = 1 - u^(1/N), computed without losing it to rounding.
  const double tail = -std::expm1(std::log(u) / static_cast<double>(o.gpus));
  return at_survival(o, tail);
}

double allreduce_seconds(double bytes, int64_t gpus, double bus_gb_per_s, double hop_us) {
  if (gpus <= 1) return 0;
  const double n = static_cast<double>(gpus);
  return 2 * (n - 1) / n * bytes / (bus_gb_per_s * 1e9) + 2 * std::log2(n) * hop_us * 1e-6;
}

Fleet simulate_fleet(const RankStep& r, const FleetOptions& o) {
  check(o);
  if (r.compute_w.empty() || !(r.dt_s > 0)) throw invalid_input("the rank's step is empty");
  const double dt = r.dt_s;
  const auto per_bin =
      std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(o.resolution_s / dt)));
  const double fine_s = o.lead_in_s + o.seconds * 1.5 + o.tail_s;  // a late last step included
  if (fine_s / dt * (kNormalNodes + kStragglerNodes) > kMaxWork) {
    // The rank's step is sampled every 1 ms whatever the output's resolution: the bound is time.
    const double most_s =
        (kMaxWork / (kNormalNodes + kStragglerNodes) * dt - o.lead_in_s - o.tail_s) / 1.5;
    throw invalid_input("seconds", "at most " + std::to_string(static_cast<int64_t>(most_s)) +
                                       " s in one run (the rank's step is simulated every " +
                                       std::to_string(dt * 1e3).substr(0, 4) +
                                       " ms); simulate less at a time");
  }
  // The quadrature: each node a rank's slowness, with the share of ranks it stands for.
  std::vector<double> node_f, node_w;
  for (int q = 0; q < kNormalNodes; ++q) {
    FleetOptions normal = o;
    normal.straggler_share = 0;
    node_f.push_back(slowness_quantile(normal, (q + 0.5) / kNormalNodes));
    node_w.push_back((1 - o.straggler_share) / kNormalNodes);
  }
  if (o.straggler_share > 0) {
    for (int q = 0; q < kStragglerNodes; ++q) {
      FleetOptions slow = o;
      slow.straggler_share = 1;
      node_f.push_back(slowness_quantile(slow, (q + 0.5) / kStragglerNodes));
      node_w.push_back(o.straggler_share / kStragglerNodes);
    }
  }
  const double n = static_cast<double>(o.gpus);
  Fleet f;
  f.power.dt_s = dt * static_cast<double>(per_bin);
  std::vector<double>& out = f.power.w;
  std::size_t fine = 0;  // fine samples written
  auto emit = [&](double w) {
    const std::size_t bin = fine / per_bin;
    if (bin >= out.size()) out.push_back(0);
    out[bin] += w / static_cast<double>(per_bin);
    f.energy_j += w * dt;
    ++fine;
  };
  auto hold = [&](double w, double seconds) {
    for (auto k = static_cast<int64_t>(std::llround(seconds / dt)); k > 0; --k) emit(w);
  };
  hold(n * r.idle_w, o.lead_in_s);
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> uniform(std::nextafter(0.0, 1.0), 1.0);
  const double compute_s = r.seconds();
  const double job_end = o.lead_in_s + o.seconds;
  double slowest_sum = 0;
  while (static_cast<double>(fine) * dt < job_end) {
    const double worst = slowest_of(o, uniform(rng));
    slowest_sum += worst;
    const auto span = static_cast<int64_t>(std::ceil(compute_s * worst / dt));
    for (int64_t k = 0; k < span; ++k) {
      const double tau = (static_cast<double>(k) + 0.5) * dt;
      double w = 0;
      for (std::size_t j = 0; j < node_f.size(); ++j) {
        const double fj = std::min(node_f[j], worst);
        const double own = tau / fj;  // where in its own step this rank is
        if (own >= compute_s) {
          w += node_w[j] * r.comm_w;
          continue;
        }
        const double x = own / dt - 0.5;
        const auto i = static_cast<std::size_t>(std::max(0.0, std::floor(x)));
        const double frac = std::clamp(x - static_cast<double>(i), 0.0, 1.0);
        const double a = r.compute_w[std::min(i, r.compute_w.size() - 1)];
        const double b = r.compute_w[std::min(i + 1, r.compute_w.size() - 1)];
        w += node_w[j] * (a + (b - a) * frac);
      }
      emit(n * w);
    }
    hold(n * r.comm_w, o.allreduce_s);
    ++f.steps;
    if (o.checkpoint_every > 0 && f.steps % o.checkpoint_every == 0)
      hold(n * r.idle_w, o.checkpoint_s);
  }
  const double train_end = static_cast<double>(fine) * dt;
  hold(n * r.idle_w, o.tail_s);
  if (fine % per_bin != 0) out.pop_back();  // a partial last bin would read low
  f.mean_step_s = f.steps > 0 ? (train_end - o.lead_in_s) / static_cast<double>(f.steps) : 0;
  f.slowest_mean = f.steps > 0 ? slowest_sum / static_cast<double>(f.steps) : 0;
  return f;
}

RankStep rank_step(const Profile& p, const workload::Plan& plan, int iterations, double warm_s,
                   double dt_s, double comm_share) {
  if (iterations < 1) throw invalid_input("iterations", "expected 1 or more a step");
  if (!(dt_s >= 1e-4 && dt_s <= 1)) throw invalid_input("resolution", "expected 1e-4 to 1 s");
  if (!(comm_share >= 0 && comm_share <= 1))
    throw invalid_input("comm power", "expected a share from 0 to 1");
  Profile q = p;
  q.driver_sample_ms = dt_s * 1e3;  // the driver's buffer as fine as the fleet's grid
  DeviceOptions d;
  d.sensor_noise = 0;
  d.step_s = std::min(1e-4, dt_s / 10);
  SimDevice dev(q, d);
  if (warm_s > 0) dev.run(plan, 0, warm_s);
  const int64_t begin = dev.now_ns();
  dev.run(plan, iterations, 0);
  const int64_t end = dev.now_ns();
  RankStep r;
  r.dt_s = dt_s;
  r.idle_w = p.idle_w;
  r.comm_w = p.idle_w + comm_share * (p.power_limit_w - p.idle_w);
  for (const auto& s : dev.trace().samples) {
    const auto& w = s[telemetry::Signal::kDriverPower];
    // Each driver sample is the mean over the dt before it.
    if (w.ok() && s.t_ns > begin && s.t_ns <= end)
      r.compute_w.push_back(static_cast<double>(w.value) * 1e-3);
  }
  if (r.compute_w.empty())
    throw invalid_input("the plan's step is shorter than the resolution; sample finer");
  return r;
}

void print_fleet(std::FILE* out, const Fleet& f, const FleetOptions& o, const RankStep& rank,
                 const Profile& p, const std::string& workload, int iterations) {
  std::fprintf(
      out,
      "simulated fleet: %lld x %s (%s profile), each step %d x '%s' (%.1f ms, %.0f W at the "
      "peak) then an all-reduce of %.1f ms at %.0f W",
      static_cast<long long>(o.gpus), p.name.c_str(), p.status.c_str(), iterations,
      workload.c_str(), rank.seconds() * 1e3,
      *std::max_element(rank.compute_w.begin(), rank.compute_w.end()), o.allreduce_s * 1e3,
      rank.comm_w);
  if (o.checkpoint_every > 0)
    std::fprintf(out, ", a %.3g s checkpoint every %d steps", o.checkpoint_s, o.checkpoint_every);
  std::fprintf(
      out,
      "\n%lld steps of %.1f ms in %.0f s (the slowest rank %.1f%% behind the mean one), %.3g MWh\n",
      static_cast<long long>(f.steps), f.mean_step_s * 1e3, o.seconds, (f.slowest_mean - 1) * 100,
      f.energy_j / 3.6e9);
}

nlohmann::json to_json(const Fleet& f, const FleetOptions& o) {
  return {{"gpus", o.gpus},
          {"steps", f.steps},
          {"mean_step_s", f.mean_step_s},
          {"energy_j", f.energy_j},
          {"allreduce_s", o.allreduce_s}};
}

}  // namespace powershape::sim
