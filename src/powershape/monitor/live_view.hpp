#pragma once
// `monitor --live`: one line per GPU, like `nvidia-smi dmon` with the throttle reasons spelled
// out: power against the enforced limit, SM clock, temperature, the clock-event reasons set now,
// and the energy since the recording began.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "powershape/trace/trace.hpp"

namespace powershape::monitor {

class LiveView {
 public:
  // terminal: redraw in place (ANSI cursor moves); else print each view as a new block.
  explicit LiveView(bool terminal) : terminal_(terminal) {}
  // The lines for the latest readings in `t`.
  std::vector<std::string> lines(const trace::Trace& t);
  void show(std::FILE* out, const trace::Trace& t);

 private:
  bool terminal_;
  int shown_ = 0;                        // lines drawn last time (to move back over)
  std::map<int, int64_t> first_energy_;  // per GPU, the counter at the first reading
};

}  // namespace powershape::monitor
