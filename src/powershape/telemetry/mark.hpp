#pragma once
// Region boundaries sent to an enclosing recorder (`powershape monitor`, `compare`) through the
// FIFO named by POWERSHAPE_CONTROL: one line each, "begin T_NS NAME" or "end T_NS NAME", T_NS on
// the steady (CLOCK_MONOTONIC) clock, which every process on the machine shares.
#include <cstdint>
#include <optional>
#include <string>

namespace powershape::telemetry {

inline constexpr const char* kControlEnv = "POWERSHAPE_CONTROL";

struct Mark {
  bool begin;
  int64_t t_ns;
  std::string name;
};
std::optional<Mark> parse_mark(const std::string& line);
std::string format_mark(const Mark& m);

// Writes the mark to the FIFO at `path` in one write (atomic: names are at most 200 bytes);
// throws std::runtime_error naming the path when it cannot, when it is not a FIFO (a regular
// file is never written; a symbolic link is not followed) or when another user (not root) owns it.
void send_mark(const std::string& path, const Mark& m);

}  // namespace powershape::telemetry
