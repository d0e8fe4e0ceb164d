#include "powershape/experiment/probe_record.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "powershape/trace/csv_writer.hpp"
#include "powershape/util/atomic_file.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::experiment {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The LM head at the two training shapes and matmul-softmax-matmul at its default.
std::vector<workload::Workload> kernel_workloads(int chunks) {
  workload::LmHead small{16384, 4096, 128256}, large{131072, 896, 151936};
  workload::Msm msm{65536, 512, 65536};
  return {{small, chunks}, {large, chunks}, {msm, chunks}};
}

void prepare(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw invalid_input("record", dir + " is a file");
    if (!fs::is_empty(dir, ec))
      throw invalid_input("record", dir + " holds files already; give a new folder");
  }
  fs::create_directories(dir, ec);
  if (ec) throw invalid_input("record", "cannot make " + dir + ": " + ec.message());
}

}  // namespace

double record_probe(Backend& b, const RecordPlan& rp, const std::string& dir) {
  prepare(dir);
  const int64_t start = b.now_ns();
  // Configuration 0: products back to back; then every square wave.
  std::vector<workload::Plan> configs = {workload::products_plan({8192})};
  json conditions = json::array();
  struct Square {
    double duty;
    std::string gap;
    int period_ms;
  };
  std::vector<Square> squares;
  for (double duty : rp.duties) {
    for (const auto& gap : rp.gaps) {
      for (int p : rp.periods_ms) {
        workload::Square sq{static_cast<double>(p), duty,
                            gap == "memory" ? workload::Gap::kMemory : workload::Gap::kIdle};
        configs.push_back(workload::make_plan({sq}, b.peak_rates()));
        squares.push_back({duty, gap, p});
      }
    }
  }
  b.set_configs(configs);
  std::vector<trace::Region> regions;
  const int total = static_cast<int>(squares.size()) + 2 + 3 * static_cast<int>(rp.chunks.size());
  int done = 0;
  const auto tick = [&] {
    ++done;
    if (rp.progress) rp.progress(done, total, static_cast<double>(b.now_ns() - start) * 1e-9);
  };
  const auto condition = [&](json figures, const std::string& name, auto&& body) {
    const int64_t t0 = b.now_ns();
    body(figures);
    const int64_t t1 = b.now_ns();
    regions.push_back({name, -1, t0, t1});
    figures["name"] = name;
    figures["begin_ns"] = t0;
    figures["end_ns"] = t1;
    conditions.push_back(figures);
    tick();
  };
  const auto measured = [](json& f, const Measurement& m) {
    json j = to_json(m);
    for (auto it = j.begin(); it != j.end(); ++it) f[it.key()] = it.value();
  };
  condition({{"kind", "idle"}}, "idle", [&](json&) { b.idle(3); });
  // From idle straight into products: the step response, then the sustained state and heat.
  condition({{"kind", "sustained"}}, "sustained",
            [&](json& f) { measured(f, b.measure(0, rp.sustained_s)); });
  for (std::size_t i = 0; i < squares.size(); ++i) {
    const auto& s = squares[i];
    const std::string name = "square duty=" + std::to_string(static_cast<int>(s.duty * 100)) +
                             " gap=" + s.gap + " period_ms=" + std::to_string(s.period_ms);
    b.idle(0.5);
    condition({{"kind", "square"}, {"duty", s.duty}, {"gap", s.gap}, {"period_ms", s.period_ms}},
              name, [&](json& f) {
                measured(f, b.measure(i + 1, std::max(rp.window_s, 4 * s.period_ms * 1e-3)));
              });
  }
  // The clock as the GPU sees it across a load step (where the device has the probe).
  b.idle(1);
  const int64_t probe_t0 = b.now_ns();
  const auto clock = b.probe_clock_step(0, 0.3, 1.2);
  if (!clock.empty()) {
    regions.push_back({"clock probe", -1, probe_t0, b.now_ns()});
    // 100 us means of the probe's 10 us bins (as data/h200's probe file): a tenth of the rows,
    // and the fast limiter's ~100 us alternation still shows.
    std::ostringstream f;
    f << "t_ms,sm_clock_mhz\n";
    for (std::size_t i = 0; i < clock.size(); i += 10) {
      double sum = 0;
      std::size_t n = 0;
      for (; n < 10 && i + n < clock.size(); ++n) sum += clock[i + n].second;
      f << clock[i].first << ',' << static_cast<int64_t>(sum / static_cast<double>(n) + 0.5)
        << '\n';
    }
    util::write_file_atomic(dir + "/clock_probe.csv", f.str());
  }
  // Each kernel on its own, at every chunk count.
  std::vector<workload::KernelTime> kernels;
  std::vector<workload::Plan> kplans;
  for (int c : rp.chunks) {
    for (const auto& w : kernel_workloads(c))
      kplans.push_back(workload::make_plan(w, b.peak_rates()));
  }
  b.set_configs(kplans);
  for (std::size_t i = 0; i < kplans.size(); ++i) {
    const int64_t t0 = b.now_ns();
    auto k = b.time_kernels(i, rp.kernel_iterations);
    regions.push_back({"kernels " + kplans[i].name, -1, t0, b.now_ns()});
    kernels.insert(kernels.end(), k.begin(), k.end());
    tick();
  }
  trace::Trace t = b.recorded();
  t.regions.insert(t.regions.end(), regions.begin(), regions.end());
  trace::write_csv(dir + "/trace.csv", t);
  workload::write_kernel_times(dir + "/kernels.csv", kernels);
  util::write_json_file(dir + "/conditions.json",
                        {{"format", "powershape probe record v1"},
                         {"backend", b.describe()},
                         {"device", b.device_json()},
                         {"peak_tflops", b.peak_rates().flops_per_s * 1e-12},
                         {"copy_gbs", b.peak_rates().bytes_per_s * 1e-9},
                         {"conditions", conditions}});
  return static_cast<double>(b.now_ns() - start) * 1e-9;
}

}  // namespace powershape::experiment
