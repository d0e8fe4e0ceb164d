// What a region boundary costs a monitored program: `powershape mark begin NAME` started N times
// as a child, as a training script's subprocess call would, against /bin/true started the same way
// in the same run. Reports per call the wall time and how late the boundary lands (the mark's
// CLOCK_MONOTONIC timestamp minus the moment the caller asked), p50 and p90.
//   mark_cost [--powershape build/powershape] [--calls 50]
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "powershape/telemetry/clock.hpp"

extern char** environ;

namespace {

// Runs argv to its end; returns its exit status.
int run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"What `powershape mark` costs a monitored program"};
  std::string ps = "build/powershape";
  int calls = 50;
  app.add_option("--powershape", ps, "The powershape binary (default build/powershape)");
  app.add_option("--calls", calls, "Calls of each (default 50)")->check(CLI::Range(2, 100000));
  CLI11_PARSE(app, argc, argv);
  // The control channel the monitor would read: a FIFO held open here, read after each call.
  const std::string dir = "/tmp/powershape_mark_cost." + std::to_string(getpid());
  const std::string fifo = dir + "/control";
  if (mkdir(dir.c_str(), 0700) != 0 || mkfifo(fifo.c_str(), 0600) != 0) {
    std::fprintf(stderr, "mark_cost: cannot make %s\n", fifo.c_str());
    return 1;
  }
  const int fd = open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  setenv("POWERSHAPE_CONTROL", fifo.c_str(), 1);
  std::vector<double> mark_ms, late_ms, true_ms;
  int failed = 0;
  for (int i = 0; i < calls; ++i) {
    int64_t t0 = powershape::telemetry::steady_now_ns();
    if (run({"/bin/true"}) != 0) ++failed;
    true_ms.push_back(static_cast<double>(powershape::telemetry::steady_now_ns() - t0) * 1e-6);
    t0 = powershape::telemetry::steady_now_ns();
    if (run({ps, "mark", "begin", "step"}) != 0) ++failed;
    mark_ms.push_back(static_cast<double>(powershape::telemetry::steady_now_ns() - t0) * 1e-6);
    char line[256] = "";
    const ssize_t n = read(fd, line, sizeof line - 1);
    long long t_mark = 0;
    if (n > 0 && std::sscanf(line, "begin %lld", &t_mark) == 1) {
      late_ms.push_back(static_cast<double>(t_mark - t0) * 1e-6);
    } else {
      ++failed;
    }
  }
  close(fd);
  unlink(fifo.c_str());
  rmdir(dir.c_str());
  if (failed > 0 || late_ms.empty()) {
    std::fprintf(stderr, "mark_cost: %d of %d calls failed (is %s built?)\n", failed, calls,
                 ps.c_str());
    return 1;
  }
  std::printf("%-34s %9s %9s\n", "per call (ms)", "p50", "p90");
  std::printf("%-34s %9.3f %9.3f\n", "/bin/true started (reference)", quantile(true_ms, 0.5),
              quantile(true_ms, 0.9));
  std::printf("%-34s %9.3f %9.3f\n", "powershape mark: wall", quantile(mark_ms, 0.5),
              quantile(mark_ms, 0.9));
  std::printf("%-34s %9.3f %9.3f\n", "powershape mark: boundary late by", quantile(late_ms, 0.5),
              quantile(late_ms, 0.9));
  std::printf("mark / true (p50): %.2f; target: the boundary under 1 ms late\n",
              quantile(mark_ms, 0.5) / quantile(true_ms, 0.5));
  return 0;
}
