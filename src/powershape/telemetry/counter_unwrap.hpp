#pragma once
#include <cstdint>
#include <optional>

namespace powershape::telemetry {

// Turns a raw 64-bit counter that may wrap, reset or jump into a monotone one.
// A raw value below the previous one is a wrap when the previous one was in the counter's top
// half (the delta is taken modulo 2^64); a reset when it fell below half the previous one (a
// driver reload restarts the count near 0: counting continues from the raw value); otherwise a
// small step back, which drivers make now and then, and which is held: the value stays until the
// raw counter passes its previous high again.
// A step forward faster than `most_per_s` allows (over the time since the last reading plus one
// second, for counters that update in lumps) is a glitch, not work done: it is not counted, and
// counting goes on from the new raw value.
class CounterUnwrap {
 public:
  explicit CounterUnwrap(int64_t most_per_s = INT64_MAX) : most_per_s_(most_per_s) {}
  struct Step {
    int64_t value;   // monotone; starts at the first raw value (at 0 if that is above 2^62)
    bool went_back;  // the raw counter wrapped or was reset at this step (not a small step back)
    uint64_t jumped = 0;  // a step forward beyond most_per_s, left out of value
  };
  Step feed(uint64_t raw, int64_t t_ns);

 private:
  int64_t most_per_s_;
  std::optional<uint64_t> last_raw_;
  int64_t last_t_ns_ = 0;
  uint64_t total_ = 0;
};

}  // namespace powershape::telemetry
