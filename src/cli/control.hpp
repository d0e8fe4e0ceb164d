#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace powershape::cli {

// The channel through which a monitored command places regions: a FIFO whose path the monitor
// exports as POWERSHAPE_CONTROL. Each line is "begin T_NS NAME" or "end T_NS NAME", T_NS on the
// steady (CLOCK_MONOTONIC) clock, which every process on the machine shares.
inline constexpr const char* kControlEnv = "POWERSHAPE_CONTROL";

struct Mark {
  bool begin;
  int64_t t_ns;
  std::string name;
};
std::optional<Mark> parse_mark(const std::string& line);
std::string format_mark(const Mark& m);

class ControlFifo {
 public:
  ControlFifo();  // creates the FIFO in a fresh temporary folder; throws on failure
  ~ControlFifo();
  ControlFifo(const ControlFifo&) = delete;
  ControlFifo& operator=(const ControlFifo&) = delete;
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // Reads what has arrived; returns complete lines, keeps a partial one.
  std::string read_available();

 private:
  std::string dir_, path_, partial_;
  int fd_ = -1, keep_open_ = -1;
};

}  // namespace powershape::cli
