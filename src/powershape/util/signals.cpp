#include "powershape/util/signals.hpp"

#include <atomic>
#include <csignal>

namespace powershape::util {
namespace {
std::atomic<pid_t> g_target{0};
std::atomic<int> g_signal{0};

void on_signal(int sig) {
  g_signal = sig;
  pid_t p = g_target;
  if (p != 0) kill(p, sig);     // -pid: a process group
  if (p < 0) kill(p, SIGCONT);  // a group held by a pacer sees the signal now, not when let go
}
}  // namespace

void forward_signals_to(pid_t pid) {
  g_target = pid;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A hang-up (the terminal closed, the ssh session dropped) too, unless it is ignored (nohup):
  // a handler would not pass that on to the command, which would then die of it.
  struct sigaction hup {};
  if (sigaction(SIGHUP, nullptr, &hup) == 0 && hup.sa_handler != SIG_IGN)
    sigaction(SIGHUP, &sa, nullptr);
}

int received_signal() { return g_signal; }

}  // namespace powershape::util
