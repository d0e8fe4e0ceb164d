#include "powershape/trace/csv_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <variant>

#include "powershape/telemetry/counter_unwrap.hpp"
#include "powershape/trace/json_codec.hpp"
#include "powershape/trace/nvidia_smi_log.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/input_file.hpp"
#include "powershape/util/lines.hpp"
#include "powershape/util/printable.hpp"

namespace powershape::trace {
namespace {
using telemetry::Reading;
using telemetry::Signal;

struct TimeCol {
  double ns_per_unit;
};
struct GpuCol {};
struct CondCol {};
using Column = std::variant<TimeCol, GpuCol, CondCol, Signal>;

std::optional<Column> column_for(std::string_view name) {
  // Other tools' names for the same signals, and this project's first trace format (v1:
  // "power_usage [mW]"), still read.
  static const std::map<std::string_view, Signal> kAliases = {
      {"p_mw", Signal::kPowerUsage},        {"pinst_mw", Signal::kPowerInstant},
      {"p_inst_mw", Signal::kPowerInstant}, {"pavg_mw", Signal::kPowerAverage},
      {"sm_mhz", Signal::kSmClock},         {"nvml_sm_mhz", Signal::kSmClock},
      {"temp_c", Signal::kGpuTemp},         {"reasons", Signal::kReasons}};
  if (name == "t_ns" || name == "t [ns]") return TimeCol{1.0};
  if (name == "t_s" || name == "t") return TimeCol{1e9};
  if (name == "t_ms" || name == "t_ms_from_probe_start") return TimeCol{1e6};
  if (name == "gpu") return GpuCol{};
  if (name == "cond") return CondCol{};
  if (auto it = kAliases.find(name); it != kAliases.end()) return it->second;
  for (const auto& sp : telemetry::signal_specs()) {
    if (name == telemetry::column_name(sp.signal) ||
        name == std::string(sp.name) + " [" + std::string(sp.unit) + "]")
      return sp.signal;
  }
  return std::nullopt;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    auto comma = line.find(',', start);
    out.push_back(line.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// An energy counter that goes back (a driver reload, a GPU reset, or a trace written by another
// tool from the raw counter) is unwrapped as the sampler does it live: a wrap continues modulo
// 2^64, a reset continues from the new value, a leap faster than any GPU draws is not counted;
// each is said in an event. Fed each GPU's readings in time order.
class EnergyUnwrap {
 public:
  void feed(Sample& s, std::vector<Event>& events) {
    Reading& e = s[Signal::kEnergy];
    if (!e.ok()) return;
    auto [it, fresh] = per_gpu_.try_emplace(
        s.gpu, telemetry::CounterUnwrap(telemetry::spec(Signal::kPowerUsage).most), 0);
    auto& [unwrap, first] = it->second;
    if (fresh) first = e.value;
    const auto step = unwrap.feed(static_cast<uint64_t>(e.value), s.t_ns);
    // CounterUnwrap starts at the first value (at 0 above 2^62); the file's own start is kept.
    const int64_t base = first < (int64_t{1} << 62) ? first : 0;
    e.value = static_cast<int64_t>(static_cast<uint64_t>(first) +
                                   static_cast<uint64_t>(step.value - base));
    if (step.went_back) events.push_back({s.t_ns, s.gpu, "energy counter went back; continued"});
    if (step.jumped > 0)
      events.push_back({s.t_ns, s.gpu,
                        "energy counter leapt " + std::to_string(step.jumped) +
                            " mJ, faster than any GPU draws; not counted"});
  }

 private:
  std::map<int, std::pair<telemetry::CounterUnwrap, int64_t>> per_gpu_;  // and the first value
};

// A reading no GPU gives (telemetry::SignalSpec::most) is a unit or a driver glitch: left out
// (an error reading), said once with how many and the first, so that neither report, advise nor
// swing believes it and a long recording with one glitch still reads.
class Physical {
 public:
  void check(Sample& s) {
    for (const auto& sp : telemetry::signal_specs()) {
      Reading& r = s[sp.signal];
      if (!r.ok() || r.value <= sp.most) continue;
      if (dropped_++ == 0) {
        first_ = telemetry::column_name(sp.signal) + " " + std::to_string(r.value) + " (at most " +
                 std::to_string(sp.most) + ")";
        first_t_ = s.t_ns;
        first_gpu_ = s.gpu;
      }
      r = Reading::failed(telemetry::Status::kError);
    }
  }
  void say(std::vector<Event>& events) const {
    if (dropped_ > 0)
      events.push_back(
          {first_t_, first_gpu_,
           std::to_string(dropped_) + " reading(s) beyond any GPU left out, the first " + first_});
  }

 private:
  std::size_t dropped_ = 0;
  std::string first_;
  int64_t first_t_ = 0;
  int first_gpu_ = 0;
};

class Parser {
 public:
  using Sink = std::function<void(const Sample&)>;
  // With a sink, rows go to it as they are read (their energy unwrapped in file order, checked by
  // Physical) and the trace returned holds none.
  explicit Parser(std::string name, Sink sink = {})
      : name_(std::move(name)), sink_(std::move(sink)) {}

  [[noreturn]] void fail(std::size_t col, const std::string& what) const {
    std::string where = name_ + ":" + std::to_string(line_no_);
    if (col > 0) where += ":" + std::to_string(col);
    throw invalid_input(where + ": " + what);
  }

  Trace parse(std::istream& in) {
    std::string line;
    while (util::read_line(in, line, name_)) {
      ++line_no_;
      if (line_no_ == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 BOM
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      if (!in.eof()) {
        line_of(line);
        continue;
      }
      // The last line has no newline: a recording cut off (a killed writer, a full disk) may
      // have torn it, a row or a comment. Such a line is dropped and said so in an event.
      try {
        line_of(line);
      } catch (const std::runtime_error& e) {
        trace_.events.push_back({last_t_, -1, std::string(kTornPrefix) + e.what()});
      }
    }
    if (columns_.empty()) fail(0, "no header row");
    close_cond();
    if (!sink_) {
      std::vector<Sample*> rows;
      for (auto& s : trace_.samples) rows.push_back(&s);
      std::stable_sort(rows.begin(), rows.end(), [](const Sample* a, const Sample* b) {
        return a->gpu != b->gpu ? a->gpu < b->gpu : a->t_ns < b->t_ns;
      });
      for (Sample* s : rows) unwrap_.feed(*s, trace_.events);
      for (auto& s : trace_.samples) physical_.check(s);
    } else {
      // Said as the trace in memory says them: each GPU's in turn.
      std::stable_sort(unwrap_events_.begin(), unwrap_events_.end(),
                       [](const Event& a, const Event& b) { return a.gpu < b.gpu; });
      trace_.events.insert(trace_.events.end(), unwrap_events_.begin(), unwrap_events_.end());
    }
    physical_.say(trace_.events);
    return std::move(trace_);
  }

 private:
  void comment(const std::string& line) {
    auto space = line.find(' ', 2);
    if (line.size() < 3 || line[1] != ' ' || space == std::string::npos) return;
    std::string kind = line.substr(2, space - 2);
    if (kind != "source" && kind != "device" && kind != "region" && kind != "event" &&
        kind != "process" && kind != "clock")
      return;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line.substr(space + 1));
      if (kind == "source") trace_.source = j.get<std::string>();
      if (kind == "device") trace_.devices.push_back(device_from_json(j));
      if (kind == "region") trace_.regions.push_back(region_from_json(j));
      if (kind == "event") trace_.events.push_back(event_from_json(j));
      if (kind == "process") trace_.processes.push_back(process_from_json(j));
      if (kind == "clock") {
        const auto& v = j.at("wall_minus_steady_ns");
        if (!v.is_number_integer() ||
            (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
          throw invalid_input("wall_minus_steady_ns: expected an integer");
        trace_.wall_minus_steady_ns = v.get<int64_t>();
      }
    } catch (const std::exception& e) {
      fail(space + 2, "bad " + kind + " line: " + e.what());
    }
  }

  void header(const std::string& line) {
    auto names = split(line);
    std::size_t col = 1;
    bool has_time = false;
    for (auto n : names) {
      auto c = column_for(n);
      if (!c) fail(col, "unknown column '" + util::printable(n) + "'");
      has_time |= std::holds_alternative<TimeCol>(*c);
      columns_.push_back(*c);
      col += n.size() + 1;
    }
    if (!has_time) fail(1, "no time column (t_ns, t_ms or t_s)");
  }

  void line_of(const std::string& line) {
    if (line[0] == '#') {
      comment(line);
    } else if (columns_.empty()) {
      header(line);
    } else {
      row(line);
    }
  }

  // Powers, energy, clocks, throttle times and utilisation cannot be below zero (temperatures
  // can; a bitmask with its top bit set reads as a negative integer); a negative one is a broken
  // file, not a reading.
  static bool never_negative(Signal s) {
    return s != Signal::kGpuTemp && s != Signal::kMemTemp && s != Signal::kReasons;
  }

  void row(const std::string& line) {
    auto cells = split(line);
    if (cells.size() != columns_.size()) {
      fail(0, "expected " + std::to_string(columns_.size()) + " cells, found " +
                  std::to_string(cells.size()));
    }
    Sample s;
    std::size_t col = 1;
    std::string_view cond;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      std::string_view c = cells[i];
      std::visit(
          [&](const auto& kind) {
            using K = std::decay_t<decltype(kind)>;
            if constexpr (std::is_same_v<K, TimeCol>) {
              s.t_ns = to_int64(number(c, col) * kind.ns_per_unit, col);
            } else if constexpr (std::is_same_v<K, GpuCol>) {
              const int64_t g = integer(c, col);
              if (g < 0 || g >= kMaxGpus) {
                fail(col, "gpu index " + util::printable(c) + " is outside 0-" +
                              std::to_string(kMaxGpus - 1));
              }
              s.gpu = static_cast<int>(g);
            } else if constexpr (std::is_same_v<K, CondCol>) {
              cond = c;
            } else {
              s[kind] = reading(c, col);
              if (s[kind].ok() && s[kind].value < 0 && never_negative(kind)) {
                fail(col, "negative " + std::string(telemetry::spec(kind).name) + " " +
                              util::printable(c));
              }
            }
          },
          columns_[i]);
      col += c.size() + 1;
    }
    track_cond(cond, s.t_ns);
    last_t_ = s.t_ns;
    if (!sink_) {
      trace_.samples.push_back(s);
      return;
    }
    if (s[Signal::kEnergy].ok()) {
      auto [last, fresh] = energy_t_.try_emplace(s.gpu, s.t_ns);
      if (!fresh && s.t_ns < last->second)
        throw OutOfOrder(name_ + ":" + std::to_string(line_no_) + ": GPU " + std::to_string(s.gpu) +
                         "'s energy readings go back in time");
      last->second = s.t_ns;
    }
    unwrap_.feed(s, unwrap_events_);
    physical_.check(s);
    sink_(s);
  }

  int64_t integer(std::string_view c, std::size_t col) const {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(c.data(), c.data() + c.size(), v);
    if (ec != std::errc() || p != c.data() + c.size()) {
      fail(col, "expected an integer, found '" + util::printable(c) + "'");
    }
    return v;
  }

  double number(std::string_view c, std::size_t col) const {
    double v = 0;
    auto [p, ec] = std::from_chars(c.data(), c.data() + c.size(), v);
    if (ec != std::errc() || p != c.data() + c.size() || !(v == v)) {
      fail(col, "expected a number, found '" + util::printable(c) + "'");
    }
    return v;
  }

  int64_t to_int64(double v, std::size_t col) const {
    if (!(v > -9.2e18 && v < 9.2e18)) fail(col, "value out of range");
    return static_cast<int64_t>(v);
  }

  Reading reading(std::string_view c, std::size_t col) const {
    if (auto st = telemetry::status_from_token(c)) return Reading::failed(*st);
    if (c.find('.') != std::string_view::npos) {
      return Reading::of(to_int64(number(c, col), col));
    }
    return Reading::of(integer(c, col));
  }

  void track_cond(std::string_view cond, int64_t t_ns) {
    if (!open_cond_ || open_cond_->name != cond) {
      close_cond();
      if (!cond.empty()) open_cond_ = Region{std::string(cond), -1, t_ns, t_ns};
    }
    if (open_cond_) open_cond_->end_ns = t_ns;
  }

  void close_cond() {
    if (open_cond_) trace_.regions.push_back(*open_cond_);
    open_cond_.reset();
  }

  std::string name_;
  Sink sink_;
  EnergyUnwrap unwrap_;
  Physical physical_;
  std::vector<Event> unwrap_events_;  // streamed: said after the file's own
  std::map<int, int64_t> energy_t_;   // streamed: each GPU's last energy reading's time
  int64_t last_t_ = 0;                // the last row's time
  std::size_t line_no_ = 0;
  std::vector<Column> columns_;
  std::optional<Region> open_cond_;
  Trace trace_;
};

// A trace another reader made, held to the same physics.
Trace physical(Trace t) {
  Physical p;
  for (auto& s : t.samples) p.check(s);
  p.say(t.events);
  return t;
}

}  // namespace

namespace {

NvidiaSmiLog log_kind(std::istream& in, const std::string& name) {
  // nvidia-smi's logs (--query-gpu CSV, dmon) are read by their own reader.
  std::string first;
  while (util::read_line(in, first, name) &&
         first.find_first_not_of(" \t\r") == std::string::npos) {
  }
  const NvidiaSmiLog kind = nvidia_smi_log_kind(first);
  in.clear();
  in.seekg(0);
  return kind;
}

void open_trace(const std::string& path, std::ifstream& in) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw invalid_input(path + ": a folder, not a trace file");
  util::open_input(path, in);
}

}  // namespace

Trace read_csv(std::istream& in, const std::string& name) {
  const NvidiaSmiLog kind = log_kind(in, name);
  if (kind != NvidiaSmiLog::kNone) return physical(read_nvidia_smi_log(in, name, kind));
  return Parser(name).parse(in);
}

Trace read_csv(const std::string& path) {
  std::ifstream in;
  open_trace(path, in);
  return read_csv(in, path);
}

Trace scan_csv(const std::string& path, const std::function<void(const Sample&)>& row) {
  std::ifstream in;
  open_trace(path, in);
  const NvidiaSmiLog kind = log_kind(in, path);
  if (kind == NvidiaSmiLog::kNone) return Parser(path, row).parse(in);
  Trace t = physical(read_nvidia_smi_log(in, path, kind));  // a log is read whole
  for (const auto& s : t.samples) row(s);
  t.samples.clear();
  return t;
}

}  // namespace powershape::trace
