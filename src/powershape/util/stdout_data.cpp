#include "powershape/util/stdout_data.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "powershape/util/error.hpp"

namespace powershape::util {
namespace {
std::FILE* g_data = nullptr;
}  // namespace

void send_table_to_stderr() {
  if (g_data != nullptr) return;
  std::fflush(stdout);
  const int data = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (data < 0) return;
  g_data = fdopen(data, "w");
  dup2(STDERR_FILENO, STDOUT_FILENO);
}

std::FILE* data_stdout() { return g_data != nullptr ? g_data : stdout; }

void write_stdout(const std::string& text) {
  std::FILE* f = data_stdout();
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0)
    throw write_failed("standard output", errno);
}

}  // namespace powershape::util
