#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace powershape::util {

// A command run under the monitor.
class Child {
 public:
  // Starts argv[0] from PATH with the given extra environment ("KEY=VALUE"). Throws
  // std::runtime_error with the reason when it cannot be started (the caller exits 127).
  // own_group: the command leads a process group of its own, and signal() reaches everything it
  // started (a measured run that must end whole); not for interactive commands, which would lose
  // the terminal (its standard input is /dev/null where it was the terminal).
  Child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
        bool own_group = false);
  // Non-blocking: true once the child has exited; exit_code() is then its status as a shell
  // reports it (128 + signal when killed by one).
  bool poll();
  int exit_code() const { return code_; }
  void signal(int sig);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool done_ = false;
  bool group_ = false;
  int code_ = 0;
};

}  // namespace powershape::util
