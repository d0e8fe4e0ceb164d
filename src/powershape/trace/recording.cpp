#include "powershape/trace/recording.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "powershape/telemetry/mark.hpp"

namespace powershape::trace {

Recording::Recording(telemetry::Sampler& sampler, Trace& trace, CsvWriter* csv, Warn warn)
    : sampler_(sampler), trace_(trace), csv_(csv), warn_(std::move(warn)) {}

template <class F>
void Recording::to_csv(F&& write) {
  if (csv_ == nullptr) return;
  try {
    write();
  } catch (const std::runtime_error& e) {
    // A reader that went (`-o - | head -1`) took what it wanted: said, and no failure of the run.
    reader_gone_ = csv_->reader_gone();
    failed_ = !reader_gone_;
    warn_(std::string(e.what()) + (failed_ ? "" : " (its reader went)") +
          "; recording goes on in memory, the summary follows at the end");
    csv_ = nullptr;
  }
}

void Recording::drain() {
  auto rows = sampler_.take();
  to_csv([&] { csv_->samples(rows); });
  trace_.samples.insert(trace_.samples.end(), rows.begin(), rows.end());
  for (auto& r : sampler_.take_regions()) {
    to_csv([&] { csv_->region(r); });
    trace_.regions.push_back(std::move(r));
  }
  for (auto& p : sampler_.take_processes()) {
    to_csv([&] { csv_->process(p); });
    trace_.processes.push_back(std::move(p));
  }
  for (auto& e : sampler_.take_events()) {
    to_csv([&] { csv_->event(e); });
    warn_("GPU " + std::to_string(e.gpu) + ": " + e.what);
    trace_.events.push_back(std::move(e));
  }
}

void Recording::finish() {
  to_csv([&] { csv_->finish(); });
}

MarkReader::MarkReader(Warn warn, std::string forward_to)
    : warn_(std::move(warn)), forward_to_(std::move(forward_to)) {}

void MarkReader::say(Said kind, const std::string& what) {
  if (said_[kind]) return;
  said_[kind] = true;
  warn_(what + " (said once)");
}

void MarkReader::forward(const telemetry::Mark& m) {
  if (forward_to_.empty()) return;
  try {
    telemetry::send_mark(forward_to_, m);
  } catch (const std::exception& e) {
    say(kNotPassedOn, std::string("marks not passed on: ") + e.what());
  }
}

std::vector<telemetry::Region> MarkReader::apply(telemetry::ControlFifo& fifo,
                                                 telemetry::Sampler& sampler) {
  std::vector<telemetry::Region> closed;
  std::istringstream lines(fifo.read_available());
  std::string line;
  while (std::getline(lines, line)) {
    auto m = telemetry::parse_mark(line);
    if (!m) {
      say(kMalformed, "ignored a control line that is not 'begin|end T_NS NAME'");
      continue;
    }
    if (auto why = telemetry::region_name_problem(m->name); !why.empty()) {
      say(kBadName, "ignored a region: " + why);
      continue;
    }
    if (m->begin) {
      // An enclosing recorder is sent the same begins and drops the same oldest one itself (an
      // end sent by name would close its innermost of that name instead).
      if (const auto dropped = sampler.begin_region(m->name, -1, m->t_ns))
        say(kDropped,
            "region '" + dropped->name +
                "' dropped: " + std::to_string(telemetry::RegionStack<>::kMaxOpen) +
                " regions were open (begun, never ended); the oldest open one goes first");
    } else if (auto r = sampler.end_region(m->name, m->t_ns)) {
      closed.push_back(std::move(*r));
    } else {
      say(kNeverBegan, "region '" + m->name + "' ended but never began");
      continue;  // warned here; not passed on to be warned of again
    }
    forward(*m);
  }
  return closed;
}

void MarkReader::end_forwarded(const std::vector<telemetry::Region>& dropped, int64_t t_ns) {
  for (const auto& r : dropped) forward({false, std::max(t_ns, r.begin_ns), r.name});
}

void forget_before(Trace& t, int64_t before_ns, std::size_t keep) {
  auto first = std::find_if(t.samples.begin(), t.samples.end(),
                            [&](const Sample& s) { return s.t_ns >= before_ns; });
  t.samples.erase(t.samples.begin(), first);
  const auto firstp = std::find_if(t.processes.begin(), t.processes.end(),
                                   [&](const ProcessSample& p) { return p.t_ns >= before_ns; });
  t.processes.erase(t.processes.begin(), firstp);
  const auto trim = [keep](auto& v) {
    if (v.size() > keep) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(keep));
  };
  trim(t.regions);
  trim(t.events);
}

}  // namespace powershape::trace
