#include "powershape/experiment/command_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <thread>

#include "powershape/experiment/engine.hpp"
#include "powershape/sim/sim_source.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/telemetry/region.hpp"
#include "powershape/trace/json_codec.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/printable.hpp"
#include "powershape/util/signals.hpp"

namespace powershape::experiment {

std::vector<std::vector<std::string>> commands_from(const std::vector<std::string>& words,
                                                    const std::vector<std::string>& scan) {
  std::vector<std::vector<std::string>> out(1);
  // hyperfine's way: each argument one quoted shell command ("sleep 0.1" "sleep 0.2"), when there
  // is no ::: and every argument is a command line of its own (has a space in it).
  const bool quoted = scan.empty() && words.size() >= 2 &&
                      std::all_of(words.begin(), words.end(), [](const std::string& w) {
                        return w != ":::" && w.find_first_of(" \t") != std::string::npos;
                      });
  if (quoted) {
    out.clear();
    for (const auto& w : words) out.push_back({"sh", "-c", w});
  }
  for (const auto& w : quoted ? std::vector<std::string>{} : words) {
    if (w == ":::") {
      out.emplace_back();
    } else {
      out.back().push_back(w);
    }
  }
  for (const auto& c : out) {
    if (c.empty()) throw invalid_input("an empty command (give CMD ::: CMD)");
  }
  if (!scan.empty()) {  // -L NAME V1,V2: one command, {NAME} replaced by each value
    if (out.size() != 1)
      throw invalid_input("parameter-list", "give one command to scan, not several");
    const std::string key = "{" + scan[0] + "}";
    std::vector<std::vector<std::string>> scanned;
    const std::string& values = scan[1];
    for (std::size_t at = 0; at <= values.size();) {
      const auto comma = values.find(',', at);
      const std::string v =
          values.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      if (v.empty()) throw invalid_input("parameter-list", "an empty value in '" + values + "'");
      std::vector<std::string> c = out[0];
      bool used = false;
      for (auto& w : c) {
        for (auto p = w.find(key); p != std::string::npos; p = w.find(key, p + v.size())) {
          w.replace(p, key.size(), v);
          used = true;
        }
      }
      if (!used) throw invalid_input("parameter-list", "the command has no " + key + " to replace");
      scanned.push_back(c);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    out = scanned;
  }
  if (out.size() < 2)
    throw invalid_input("give two commands or more (CMD ::: CMD, or \"CMD\" \"CMD\" each quoted)");
  if (out.size() > 64) throw invalid_input("at most 64 commands");
  return out;
}

namespace {

// The region a run's steps are measured by, when none was named: of the regions that come more
// than once, the one the fewest others hold (a job that marks its steps and, inside them, its
// gaps is measured by its steps, not by whichever region ended first; one that wraps its loop in
// a region of its own, by the steps inside it), ties going to the more frequent (steps beside a
// few evaluations), then the longer; else the first. A name is judged by the most others that
// hold any of up to 16 of its regions, spread over the run: a job that marks its gaps from the
// first step and its steps only after a warm-up has gaps that nothing holds at first.
std::string outermost(const std::vector<telemetry::Region>& regions) {
  // How many other regions hold r (a step inside a loop's region: 1; a gap inside it: 2).
  const auto depth = [&](const telemetry::Region& r) {
    return std::count_if(regions.begin(), regions.end(), [&](const telemetry::Region& q) {
      return &q != &r && q.begin_ns <= r.begin_ns && r.end_ns <= q.end_ns &&
             q.end_ns - q.begin_ns > r.end_ns - r.begin_ns;
    });
  };
  std::map<std::string, std::vector<const telemetry::Region*>> names;
  for (const auto& r : regions) names[r.name].push_back(&r);
  constexpr std::size_t kSampled = 16;  // a run of kMaxSteps regions costs 16 x names x regions
  const telemetry::Region* best = nullptr;
  long best_depth = 0;
  std::size_t best_count = 0;
  double best_ns = 0;
  for (const auto& r : regions) {
    const auto& all = names.at(r.name);
    if (all.front() != &r || all.size() < 2) continue;  // each name once
    long d = 0;
    double ns = 0;
    const std::size_t n = std::min(kSampled, all.size());
    for (std::size_t i = 0; i < n; ++i) {
      const telemetry::Region& x = *all[i * (all.size() - 1) / std::max<std::size_t>(n - 1, 1)];
      d = std::max<long>(d, depth(x));
      ns += static_cast<double>(x.end_ns - x.begin_ns) / static_cast<double>(n);
    }
    if (best == nullptr || d < best_depth ||
        (d == best_depth &&
         (all.size() > best_count || (all.size() == best_count && ns > best_ns))))
      best = &r, best_depth = d, best_count = all.size(), best_ns = ns;
  }
  return best != nullptr ? best->name : regions.front().name;
}

}  // namespace

CommandBackend::CommandBackend(std::vector<std::vector<std::string>> commands,
                               const std::string& source, std::string region, trace::Warn warn)
    : commands_(std::move(commands)),
      region_(std::move(region)),
      source_(sim::open_source(source, {})) {
  monitor::SessionOptions o;
  o.sampler = experiment::measurement_sampler_options();
  // The trace holds the runs' regions alone: a run's marks come back from run_command, and the
  // source's own (a replayed recording's) are no part of the measurement.
  o.regions_in_trace = false;
  if (!warn)
    warn = [](const std::string& w) { std::fprintf(stderr, "powershape: %s\n", w.c_str()); };
  session_ = std::make_unique<monitor::Session>(*source_, o, std::move(warn));
  session_->start_sampler();
}

CommandBackend::~CommandBackend() = default;

std::string CommandBackend::describe() const { return "commands on " + source_->describe(); }

nlohmann::json CommandBackend::device_json() const {
  return {{"simulated", false}, {"device", trace::to_json(source_->devices().at(0))}};
}

std::string CommandBackend::config_name(std::size_t i) const {
  return names_.empty() ? command_text(i) : names_.at(i);
}

void CommandBackend::set_names(std::vector<std::string> names) {
  if (names.size() != commands_.size())
    throw invalid_input("names", "one a command: " + std::to_string(commands_.size()));
  names_ = std::move(names);
}

std::string CommandBackend::command_text(std::size_t i) const {
  std::string s;
  for (const auto& a : commands_.at(i)) s += (s.empty() ? "" : " ") + a;
  return s;
}

Measurement CommandBackend::measure(std::size_t i, double /*seconds*/) {
  // A signal that came between runs stops the next before it starts.
  if (util::received_signal() != 0) throw device_error("interrupted");
  const auto ran = session_->run_command(commands_.at(i), deadline_ns_, kMaxSteps);
  const int64_t begin = ran.begin_ns, end = ran.end_ns, killed_at = ran.stopped_ns;
  const std::vector<telemetry::Region>& regions = ran.regions;
  trace::Trace& t = session_->trace();
  if (util::received_signal() != 0) throw device_error("interrupted");
  if (killed_at > 0) {
    char at[32];
    std::snprintf(at, sizeof at, "%.1f", static_cast<double>(killed_at - begin) * 1e-9);
    throw device_error("'" + util::printable(command_text(i), 200) +
                       "' was stopped: the deadline passed " + at + " s into its run");
  }
  t.regions.push_back({config_name(i), -1, begin, end});
  if (ran.exit_code != 0) {
    throw invalid_input("'" + util::printable(command_text(i), 200) + "' exited with " +
                        std::to_string(ran.exit_code));
  }
  // The telemetry of the run's end arrives a sampling period later.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  session_->turn(0);
  Measurement m;
  m.config = i;
  m.seconds = static_cast<double>(end - begin) * 1e-9;
  if (region_.empty() && !regions.empty()) region_ = outermost(regions);
  std::vector<telemetry::Region> mine;
  for (const auto& r : regions) {
    if (r.name == region_) mine.push_back(r);
  }
  steps_.insert(steps_.end(), mine.begin(), mine.end());
  if (steps_.size() > kMaxSteps)
    steps_.erase(steps_.begin(), steps_.end() - static_cast<std::ptrdiff_t>(kMaxSteps));
  if (!region_.empty() && mine.empty())
    throw invalid_input("'" + util::printable(command_text(i), 200) + "' marked no region '" +
                        region_ + "'");
  // The span of the steps it is measured by (the latest kMaxSteps), a region of its own: the
  // report's table then shows what the steps drew and held, apart from the run's start-up.
  if (!mine.empty())
    t.regions.push_back(
        {config_name(i) + ": steps", -1, mine.front().begin_ns, mine.back().end_ns});
  if (mine.empty()) {  // the whole run is one iteration
    m.iterations = 1;
    m.ms_per_iteration = m.seconds * 1e3;
    experiment::add_telemetry(m, t, begin, end);
    return m;
  }
  // Each region an iteration: clock and throttling over the span they cover, time and energy
  // their own, from this run's telemetry alone.
  // 2 s either side: the readings in force when it began (the 1 s energy counter's too).
  const trace::Trace run = trace::samples_between(t, begin - 2'000'000'000, end + 2'000'000'000);
  experiment::add_telemetry(m, run, mine.front().begin_ns, mine.back().end_ns);
  double ns = 0, joules = 0;
  // At most kMaxWindows energy windows, each a group of consecutive regions: a group's energy
  // is its span's, scaled by the share of the span its regions cover (exact for one a group).
  const std::size_t group = (mine.size() + kMaxWindows - 1) / kMaxWindows;
  for (std::size_t a = 0; a < mine.size(); a += group) {
    const std::size_t b = std::min(mine.size(), a + group) - 1;
    double inside = 0;
    for (std::size_t k = a; k <= b; ++k)
      inside += static_cast<double>(mine[k].end_ns - mine[k].begin_ns);
    Measurement one;
    experiment::add_telemetry(one, run, mine[a].begin_ns, mine[b].end_ns);
    const double span = static_cast<double>(mine[b].end_ns - mine[a].begin_ns);
    ns += inside;
    joules += span > 0 ? one.energy_j * std::min(1.0, inside / span) : 0;
  }
  m.iterations = static_cast<int>(mine.size());
  m.ms_per_iteration = ns * 1e-6 / m.iterations;
  m.energy_j = joules;
  m.avg_power_w = ns > 0 ? joules / (ns * 1e-9) : 0;
  return m;
}

void CommandBackend::idle(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  session_->turn(0);
}

std::optional<double> CommandBackend::temperature_c() {
  session_->turn(0);
  const auto& samples = session_->trace().samples;
  for (auto it = samples.rbegin(); it != samples.rend(); ++it) {
    const auto& r = (*it)[telemetry::Signal::kGpuTemp];
    if (r.ok()) return static_cast<double>(r.value);
  }
  return std::nullopt;
}

int64_t CommandBackend::now_ns() const { return telemetry::steady_now_ns(); }

trace::Trace CommandBackend::recorded() {
  session_->turn(0);
  return session_->trace();
}

}  // namespace powershape::experiment
