#include "powershape/util/child.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include "powershape/util/error.hpp"

extern char** environ;

namespace powershape::util {

Child::Child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
             bool own_group)
    : group_(own_group) {
  if (argv.empty()) throw invalid_input("no command to run");
  // Everything the child needs is built before fork: the parent has other threads.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  // A key given replaces an inherited one: getenv (glibc, CPython) returns the first of a name, so
  // an appended POWERSHAPE_CONTROL under an enclosing recorder would never be read.
  const auto given = [&](const char* e) {
    return std::any_of(env.begin(), env.end(), [&](const std::string& kv) {
      const auto eq = kv.find('=');
      return eq != std::string::npos && std::strncmp(e, kv.c_str(), eq + 1) == 0;
    });
  };
  for (char** e = environ; *e != nullptr; ++e)
    if (!given(*e)) envp.push_back(*e);
  for (const auto& kv : env) envp.push_back(const_cast<char*>(kv.c_str()));
  envp.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw device_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw device_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ > 0 && own_group) setpgid(pid_, pid_);  // both sides: no window where it has none
  if (pid_ == 0) {
    close(fds[0]);
    // If powershape dies (killed, crashed), the command is not left running unwatched.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // it died before the line above took effect
    if (own_group) {
      setpgid(0, 0);
      // In a group of its own the command is not in the terminal's foreground: a read of the
      // terminal would stop it (SIGTTIN) where nothing lets it go on. It reads nothing instead.
      if (isatty(STDIN_FILENO)) {
        const int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, STDIN_FILENO);
      }
    }
    // An ignored signal stays ignored across exec: the command gets the default powershape set
    // aside for itself (SIGXFSZ and SIGPIPE, see cli/main.cpp).
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGXFSZ, &dfl, nullptr);
    sigaction(SIGPIPE, &dfl, nullptr);
    execvpe(args[0], args.data(), envp.data());
    int err = errno;
    ssize_t n = write(fds[1], &err, sizeof err);
    (void)n;
    _exit(127);
  }
  close(fds[1]);
  int err = 0;
  ssize_t n;
  do {
    n = read(fds[0], &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  close(fds[0]);
  if (n == sizeof err) {
    waitpid(pid_, nullptr, 0);
    throw invalid_input("cannot run '" + argv[0] + "': " + std::strerror(err));
  }
}

bool Child::poll() {
  if (done_) return true;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return false;
  done_ = true;
  code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

void Child::signal(int sig) {
  if (group_) {
    kill(-pid_, sig);  // the group outlives its leader: children it left behind go too
  } else if (!done_) {
    kill(pid_, sig);
  }
}

}  // namespace powershape::util
