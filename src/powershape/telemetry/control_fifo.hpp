#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "powershape/telemetry/mark.hpp"

namespace powershape::telemetry {

// The channel through which a monitored command places regions: a FIFO whose path the monitor
// exports as POWERSHAPE_CONTROL (telemetry/mark.hpp says what travels through it).
class ControlFifo {
 public:
  ControlFifo();  // creates the FIFO in a fresh temporary folder; throws on failure
  ~ControlFifo();
  ControlFifo(const ControlFifo&) = delete;
  ControlFifo& operator=(const ControlFifo&) = delete;
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // Reads what has arrived, at most kMaxRead bytes a call (a writer faster than the reader
  // cannot hold it in the call); returns complete lines, keeps a partial one up to kMaxLine bytes
  // (a longer one is no mark and is dropped).
  std::string read_available();
  static constexpr std::size_t kMaxRead = std::size_t{1} << 20, kMaxLine = 4096;

 private:
  std::string dir_, path_, partial_;
  int fd_ = -1, keep_open_ = -1;
};

}  // namespace powershape::telemetry
