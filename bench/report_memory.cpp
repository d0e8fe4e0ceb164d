// The memory `powershape report` takes for a long recording of a node: a monitor-like trace of
// GPUS GPUs polled every 10 ms (power, clocks, temperature, reasons, utilisation), the energy
// counter every 100 ms, the driver's 50 Hz power buffer, a region ("step") every REGION_S seconds
// (60 by default; each is a row of the page's summary on every GPU), for HOURS hours.
// Each way runs in a child of its own, whose peak resident memory the kernel reports: the report
// as it reads now (the file twice, row by row) against the trace read whole (the reference: what
// it did before, and still does for --perfetto or rows out of time order).
//   report_memory [--hours H] [--gpus N] [--region-s S] [--stream-only] [--keep PATH]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "powershape/report/html_report.hpp"
#include "powershape/report/trace_digest.hpp"
#include "powershape/trace/csv_reader.hpp"

using namespace powershape;

namespace {

void write_trace(const std::string& path, double hours, int gpus, double region_s) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot write " + path);
  std::fprintf(f, "# powershape trace v2\n# source \"bench\"\n");
  std::fprintf(f,
               "t_ns,gpu,power_usage_mw,power_instant_mw,driver_power_mw,energy_mj,sm_clock_mhz,"
               "mem_clock_mhz,gpu_temp_c,clock_event_reasons,util_gpu_pct,util_mem_pct\n");
  const auto polls = static_cast<int64_t>(hours * 3600 * 100);
  std::vector<int64_t> energy(static_cast<std::size_t>(gpus), 1'000'000);
  for (int64_t i = 0; i < polls; ++i) {
    const int64_t t = 1'000'000'000 + i * 10'000'000;
    const auto every = static_cast<int64_t>(region_s * 100);
    if (i % every == 0)
      std::fprintf(f, "# region {\"name\":\"step\",\"gpu\":-1,\"begin_ns\":%lld,\"end_ns\":%lld}\n",
                   static_cast<long long>(t),
                   static_cast<long long>(t + every * 10'000'000 - 10'000'000));
    for (int g = 0; g < gpus; ++g) {
      const bool busy = (i / 50 + g) % 3 != 0;  // 0.5 s phases
      const int64_t mw = (busy ? 650'000 : 120'000) + (i * 7919 + g * 104729) % 20'000;
      auto& e = energy[static_cast<std::size_t>(g)];
      e += mw / 100;
      std::fprintf(f, "%lld,%d,%lld,%lld,,", static_cast<long long>(t + g * 50'000), g,
                   static_cast<long long>(mw - 5'000), static_cast<long long>(mw));
      if (i % 10 == 0) std::fprintf(f, "%lld", static_cast<long long>(e));
      std::fprintf(f, ",%d,2619,%d,%d,%d,%d\n", busy ? 1755 : 1980,
                   40 + static_cast<int>(i / 6000 % 30), busy ? 4 : 0, busy ? 100 : 3,
                   busy ? 60 : 1);
      if (i % 10 == 9) {  // the driver's buffer, harvested after the poll: the last 100 ms at 50 Hz
        for (int k = 0; k < 5; ++k)
          std::fprintf(f, "%lld,%d,,,%lld,,,,,,,\n",
                       static_cast<long long>(t - (80 - 20 * k) * 1'000'000 + g * 50'000), g,
                       static_cast<long long>(mw + 1'000 * k));
      }
    }
  }
  std::fclose(f);
}

struct Run {
  double seconds = 0;
  long peak_mib = 0;
  bool ok = false;
};

template <class F>
Run in_child(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      f();
      _exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "report_memory: %s\n", e.what());
      _exit(1);
    }
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  Run r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.peak_mib = ru.ru_maxrss / 1024;
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return r;
}

void page_of(report::TraceDigest d) {
  report::ReportInputs in;
  in.digest = std::move(d);
  const std::string page = report::render_page(report::report_data(in));
  if (page.empty()) throw std::runtime_error("no page");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"report's memory on a long recording of a node"};
  double hours = 0.25;
  int gpus = 8;
  double region_s = 60;
  bool stream_only = false;
  std::string keep;
  app.add_option("--hours", hours, "Hours recorded")->check(CLI::Range(0.01, 48.0));
  app.add_option("--gpus", gpus, "GPUs of the node")->check(CLI::Range(1, 64));
  app.add_option("--region-s", region_s, "Seconds between regions")
      ->check(CLI::Range(0.01, 86400.0));
  app.add_flag("--stream-only", stream_only,
               "Skip the whole read (it needs ~40x the rows' memory)");
  app.add_option("--keep", keep, "Write the trace here and keep it");
  CLI11_PARSE(app, argc, argv);
  const std::string path = keep.empty() ? (std::filesystem::temp_directory_path() /
                                           ("report_memory_" + std::to_string(getpid()) + ".csv"))
                                              .string()
                                        : keep;
  write_trace(path, hours, gpus, region_s);
  const auto bytes = std::filesystem::file_size(path);
  std::printf("trace: %.2f h of %d GPUs at 10 ms, a region every %.0f s, %.0f MB\n", hours, gpus,
              region_s, static_cast<double>(bytes) / 1e6);
  const Run stream = in_child([&] {
    auto d = report::digest_file(path, report::kMaxBins, true);
    if (!d) throw std::runtime_error("rows out of order");
    page_of(std::move(*d));
  });
  std::printf("%-22s %10s %12s %8s\n", "way", "seconds", "peak MiB", "ok");
  std::printf("%-22s %10.1f %12ld %8s\n", "row by row (now)", stream.seconds, stream.peak_mib,
              stream.ok ? "yes" : "NO");
  if (!stream_only) {
    const Run whole =
        in_child([&] { page_of(report::digest(trace::read_csv(path), report::kMaxBins, true)); });
    std::printf("%-22s %10.1f %12ld %8s\n", "read whole (before)", whole.seconds, whole.peak_mib,
                whole.ok ? "yes" : "NO");
    std::printf("peak memory, row by row / read whole: %.3f; of the file's size: %.2f / %.2f\n",
                static_cast<double>(stream.peak_mib) / static_cast<double>(whole.peak_mib),
                static_cast<double>(stream.peak_mib) * 1048576.0 / static_cast<double>(bytes),
                static_cast<double>(whole.peak_mib) * 1048576.0 / static_cast<double>(bytes));
  }
  if (keep.empty()) std::filesystem::remove(path);
  return stream.ok ? 0 : 1;
}
