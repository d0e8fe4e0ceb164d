#pragma once
#include <cstdint>
#include <optional>

namespace powershape::telemetry {

// Turns a raw 64-bit counter that may wrap or reset into a monotone one.
// A raw value below the previous one is a wrap when the previous one was in the counter's top
// half (the delta is taken modulo 2^64); a reset when it fell below half the previous one (a
// driver reload restarts the count near 0: counting continues from the raw value); otherwise a
// small step back, which drivers make now and then, and which is held: the value stays until the
// raw counter passes its previous high again.
class CounterUnwrap {
 public:
  struct Step {
    int64_t value;   // monotone; starts at the first raw value (at 0 if that is above 2^62)
    bool went_back;  // the raw counter wrapped or was reset at this step (not a small step back)
  };
  Step feed(uint64_t raw);

 private:
  std::optional<uint64_t> last_raw_;
  uint64_t total_ = 0;
};

}  // namespace powershape::telemetry
