// The SM clock's step response as the GPU sees it: the on-GPU clock probe (10 us bins) runs on
// its own stream while, after `--idle-ms` of idle, back-to-back bf16 products (`--size`^3, 4096
// by default; or an LM head, its products alone or matmul-softmax-matmul: `--workload
// lmhead|lmhead-products|msm --shape A,B,C --chunks N`) run until `--ms`. Prints the mean clock
// idle, in the first millisecond of load, over 1-50 ms, 50-100 ms and after 200 ms, and the
// iterations' median time; `-o FILE` writes t_ms,sm_mhz per bin (compare
// data/h200/sm_clock_probe_step.csv; with an LM head, the clock through each iteration once
// warm: after each cross-entropy pass and along the products between them). `--workload square
// --duty D --period-ms P --gap idle|memory` runs probe --record's square wave instead (sized as
// it sizes them): the clock through bursts and gaps shorter than NVML's 100 ms readings.
//   clock_step [--idle-ms 300] [--ms 3400] [--size 4096 | --workload lmhead --shape N,D,V
//   --chunks C | --workload square --duty D --period-ms P --gap G] [-o f.csv]
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "powershape/kernels/clock_probe.hpp"
#include "powershape/kernels/gpu_workload.hpp"
#include "powershape/workload/builders.hpp"

using namespace powershape;

int main(int argc, char** argv) {
  double idle_ms = 300, total_ms = 3400;
  std::string out, kind = "products";
  int64_t shape[3] = {0, 0, 0};
  int chunks = 1;
  int64_t size = 4096;  // the products' n (n x n x n)
  workload::Square square{50, 0.5, workload::Gap::kIdle};
  std::string gap = "idle";
  bool parsed = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--idle-ms")
      idle_ms = std::atof(argv[i + 1]);
    else if (k == "--ms")
      total_ms = std::atof(argv[i + 1]);
    else if (k == "-o")
      out = argv[i + 1];
    else if (k == "--workload")
      kind = argv[i + 1];
    else if (k == "--chunks")
      chunks = std::atoi(argv[i + 1]);
    else if (k == "--size")
      size = std::atoll(argv[i + 1]);
    else if (k == "--duty")
      square.duty = std::atof(argv[i + 1]);
    else if (k == "--period-ms")
      square.period_ms = std::atof(argv[i + 1]);
    else if (k == "--gap")
      gap = argv[i + 1];
    else if (k == "--shape")
      parsed = std::sscanf(argv[i + 1], "%" SCNd64 ",%" SCNd64 ",%" SCNd64, &shape[0], &shape[1],
                           &shape[2]) == 3;
    else {
      std::fprintf(stderr, "clock_step: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  workload::Workload w{workload::Products{size}};
  if (kind == "lmhead") {
    w = {workload::LmHead{shape[0], shape[1], shape[2]}, chunks};
  } else if (kind == "lmhead-products") {
    w = {workload::LmHeadProducts{shape[0], shape[1], shape[2]}, chunks};
  } else if (kind == "msm") {
    w = {workload::Msm{shape[0], shape[1], shape[2]}, chunks};
  } else if (kind == "square") {
    square.gap = gap == "memory" ? workload::Gap::kMemory : workload::Gap::kIdle;
    w = {square};
  }
  if (!parsed || !(idle_ms >= 0 && total_ms > idle_ms && total_ms <= 60000) ||
      !(size >= 256 && size <= 32768) ||
      (kind == "square" && !(square.duty > 0 && square.duty < 1 && square.period_ms >= 0.1 &&
                             square.period_ms <= 10000 && (gap == "idle" || gap == "memory"))) ||
      (kind != "products" && kind != "square" &&
       (shape[0] <= 0 || shape[1] <= 0 || shape[2] <= 0 || chunks < 1 || chunks > shape[0])) ||
      (kind != "products" && kind != "lmhead" && kind != "lmhead-products" && kind != "msm" &&
       kind != "square")) {
    std::fprintf(stderr,
                 "clock_step: --workload products|lmhead|lmhead-products|msm with --shape A,B,C "
                 "(positive) and --chunks 1..A, or square with 0 < --duty < 1, --period-ms "
                 "0.1..10000 and --gap idle|memory; products: --size 256..32768; 0 <= --idle-ms < "
                 "--ms <= 60000\n");
    return 2;
  }
  try {
    kernels::GpuWorkload load(w, kernels::measure_peak_rates());
    // Load every kernel now: loading a module lazily waits for the running probe to finish.
    load.run_for(0.05);
    std::this_thread::sleep_for(std::chrono::seconds(2));  // cool down after the rate check
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
      throw std::runtime_error("no stream");
    const int64_t bin_ns = 10'000;
    kernels::ClockProbe probe(static_cast<int64_t>(total_ms * 1e6) / bin_ns + 1, bin_ns);
    probe.start(s, static_cast<int64_t>(total_ms * 1e6));
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(idle_ms));
    const auto run = load.run_for((total_ms - idle_ms) * 1e-3);
    auto mhz = probe.mhz();
    auto mean = [&](double from_ms, double to_ms) {
      double sum = 0;
      int n = 0;
      for (std::size_t i = 0; i < mhz.size(); ++i) {
        const double t = static_cast<double>(i) * bin_ns * 1e-6;
        if (t >= from_ms && t < to_ms && mhz[i] > 0) {
          sum += mhz[i];
          ++n;
        }
      }
      return n > 0 ? sum / n : 0.0;
    };
    // The load starts when the clock first leaves its idle value by 5%.
    const double idle = mean(0, idle_ms * 0.8);
    double step_ms = idle_ms;
    for (std::size_t i = static_cast<std::size_t>(idle_ms * 0.8 * 1e6 / bin_ns); i < mhz.size();
         ++i) {
      if (mhz[i] > 0 && mhz[i] < 0.95 * idle) {
        step_ms = static_cast<double>(i) * bin_ns * 1e-6;
        break;
      }
    }
    std::printf(
        "idle %.0f MHz; load from %.2f ms: first 1 ms %.0f MHz, 1-50 ms %.0f, 50-100 ms %.0f, "
        "after 200 ms %.0f; %d iterations, median %.3f ms\n",
        idle, step_ms, mean(step_ms, step_ms + 1), mean(step_ms + 1, step_ms + 50),
        mean(step_ms + 50, step_ms + 100), mean(step_ms + 200, total_ms), run.iterations,
        run.ms_per_iteration);
    if (!out.empty()) {
      std::FILE* f = std::fopen(out.c_str(), "w");
      if (f == nullptr) throw std::runtime_error("cannot write " + out);
      std::fprintf(f, "t_ms,sm_mhz\n");
      for (std::size_t i = 0; i < mhz.size(); ++i)
        std::fprintf(f, "%.2f,%.0f\n", static_cast<double>(i) * bin_ns * 1e-6, mhz[i]);
      std::fclose(f);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clock_step: %s\n", e.what());
    return 1;
  }
  return 0;
}
