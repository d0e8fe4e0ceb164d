#pragma once
// The regions open now, the one stack that every recorder keeps: the sampler's (monitor's marks),
// the C API's Recorder and the command backend (a measured command's steps). Regions nest and
// overlap; an end closes the innermost open region of its name, never before that region began.
// At most kMaxOpen are open: a job that begins regions and never ends them costs a bounded stack,
// the oldest open region dropped to make room. Each open region carries an Extra (the Recorder's
// CPU energy counters at its begin). Not thread-safe: its owner holds the lock.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "powershape/telemetry/region.hpp"

namespace powershape::telemetry {

template <class Extra = std::monostate>
class RegionStack {
 public:
  static constexpr std::size_t kMaxOpen = 1024;
  struct Open {
    Region region;
    Extra extra{};
  };

  // Opens r; returns the oldest open region when it was dropped to make room.
  std::optional<Open> begin(Region r, Extra extra = {}) {
    std::optional<Open> dropped;
    if (open_.size() >= kMaxOpen) {
      dropped = std::move(open_.front());
      open_.erase(open_.begin());
    }
    open_.push_back({std::move(r), std::move(extra)});
    return dropped;
  }

  // The innermost open region of that name; null when none is open.
  const Open* find(const std::string& name) const {
    const auto it = innermost(name);
    return it == open_.rend() ? nullptr : &*it;
  }
  bool is_open(const std::string& name) const { return find(name) != nullptr; }

  // Closes the innermost open region of that name at t_ns (at its begin, if t_ns is earlier);
  // nothing when none is open.
  std::optional<Open> end(const std::string& name, int64_t t_ns) {
    const auto it = innermost(name);
    if (it == open_.rend()) return std::nullopt;
    Open o = std::move(*it);
    open_.erase(std::next(it).base());
    o.region.end_ns = std::max(o.region.begin_ns, t_ns);
    return o;
  }

  // Closes every open region at t_ns, outermost first.
  std::vector<Region> close_all(int64_t t_ns) {
    std::vector<Region> out;
    for (auto& o : std::exchange(open_, {})) {
      o.region.end_ns = std::max(o.region.begin_ns, t_ns);
      out.push_back(std::move(o.region));
    }
    return out;
  }

  const std::vector<Open>& open() const { return open_; }
  std::size_t size() const { return open_.size(); }
  void clear() { open_.clear(); }

 private:
  auto innermost(const std::string& name) const {
    return std::find_if(open_.rbegin(), open_.rend(),
                        [&](const Open& o) { return o.region.name == name; });
  }
  auto innermost(const std::string& name) {
    return std::find_if(open_.rbegin(), open_.rend(),
                        [&](const Open& o) { return o.region.name == name; });
  }
  std::vector<Open> open_;
};

}  // namespace powershape::telemetry
