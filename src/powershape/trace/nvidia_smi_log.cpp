#include "powershape/trace/nvidia_smi_log.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "powershape/util/error.hpp"
#include "powershape/util/lines.hpp"
#include "powershape/util/printable.hpp"

namespace powershape::trace {
namespace {
using telemetry::Reading;
using telemetry::Signal;
using telemetry::Status;

constexpr int kMaxGpuIndex = 1023;

std::string trim(std::string_view s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return "";
  return std::string(s.substr(a, s.find_last_not_of(" \t\r") - a + 1));
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, ',');) out.push_back(trim(f));
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

std::vector<std::string> split_ws(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string w; ss >> w;) out.push_back(w);
  return out;
}

struct Field {
  Signal signal;
  double scale;  // file unit -> the signal's (W -> mW)
  bool hex = false;
};

// --query-gpu names (without " [unit]"), old and new spellings.
std::optional<Field> query_field(const std::string& name) {
  static const std::map<std::string, Field> kFields = {
      {"power.draw", {Signal::kPowerUsage, 1000}},
      {"power.draw.average", {Signal::kPowerAverage, 1000}},
      {"power.draw.instant", {Signal::kPowerInstant, 1000}},
      {"clocks.sm", {Signal::kSmClock, 1}},
      {"clocks.current.sm", {Signal::kSmClock, 1}},
      {"clocks.mem", {Signal::kMemClock, 1}},
      {"clocks.current.memory", {Signal::kMemClock, 1}},
      {"temperature.gpu", {Signal::kGpuTemp, 1}},
      {"temperature.memory", {Signal::kMemTemp, 1}},
      {"utilization.gpu", {Signal::kUtilGpu, 1}},
      {"utilization.memory", {Signal::kUtilMem, 1}},
      {"clocks_event_reasons.active", {Signal::kReasons, 1, true}},
      {"clocks_throttle_reasons.active", {Signal::kReasons, 1, true}},
  };
  const auto it = kFields.find(name);
  if (it == kFields.end()) return std::nullopt;
  return it->second;
}

// dmon's columns.
std::optional<Field> dmon_field(const std::string& name) {
  static const std::map<std::string, Field> kFields = {
      {"pwr", {Signal::kPowerUsage, 1000}}, {"gtemp", {Signal::kGpuTemp, 1}},
      {"mtemp", {Signal::kMemTemp, 1}},     {"sm", {Signal::kUtilGpu, 1}},
      {"mem", {Signal::kUtilMem, 1}},       {"mclk", {Signal::kMemClock, 1}},
      {"pclk", {Signal::kSmClock, 1}},
  };
  const auto it = kFields.find(name);
  if (it == kFields.end()) return std::nullopt;
  return it->second;
}

class Reader {
 public:
  Reader(std::string name, Trace& t) : name_(std::move(name)), t_(t) {}

  [[noreturn]] void fail(std::size_t col, const std::string& what) const {
    std::string where = name_ + ":" + std::to_string(line_no_);
    if (col > 0) where += ":" + std::to_string(col);
    throw invalid_input(where + ": " + what);
  }

  std::size_t line_no_ = 0;

  // "85.12 W", "345 MHz", "34", "0x0000000000000004"; nullopt where nvidia-smi could not read it.
  std::optional<int64_t> value(const std::string& cell, const Field& f, std::size_t col) const {
    if (cell.empty() || cell == "-" || cell.front() == '[' || cell == "N/A") return std::nullopt;
    if (f.hex) {
      const std::string digits = cell.rfind("0x", 0) == 0 ? cell.substr(2) : cell;
      uint64_t v = 0;
      const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, 16);
      if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty())
        fail(col, "expected a hexadecimal reason mask, found '" + util::printable(cell, 40) + "'");
      return static_cast<int64_t>(v);
    }
    const std::string number = cell.substr(0, cell.find(' '));
    double v = 0;
    const auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || p != number.data() + number.size() || !std::isfinite(v) || v < 0 ||
        v > 1e7)
      fail(col, "expected a reading, found '" + util::printable(cell, 40) + "'");
    return static_cast<int64_t>(std::llround(v * f.scale));
  }

  int gpu_index(const std::string& cell, std::size_t col) const {
    int v = -1;
    const auto [p, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
    if (ec != std::errc() || p != cell.data() + cell.size() || v < 0 || v > kMaxGpuIndex)
      fail(col, "expected a GPU index from 0 to 1023, found '" + util::printable(cell, 40) + "'");
    return v;
  }

  // The position of GPU `index` in the trace's devices, added on first sight.
  int device(int index, const std::vector<Signal>& present) {
    for (std::size_t i = 0; i < t_.devices.size(); ++i)
      if (t_.devices[i].index == index) return static_cast<int>(i);
    telemetry::DeviceInfo d;
    d.index = index;
    d.name = "GPU " + std::to_string(index);
    d.support.fill(Status::kNotSupported);
    for (Signal s : present) d.support[static_cast<std::size_t>(s)] = Status::kOk;
    t_.devices.push_back(d);
    return static_cast<int>(t_.devices.size()) - 1;
  }

  // "2026/12/02 10:00:00.123" (query) or "20261202" + "10:00:00" (dmon -o DT): ns on a civil
  // day count; only differences matter.
  int64_t timestamp(const std::string& cell, std::size_t col) const {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0;
    double s = 0;
    char sep1 = 0, sep2 = 0;
    std::istringstream in(cell);
    if (cell.find('/') != std::string::npos) {
      in >> y >> sep1 >> mo >> sep2 >> d;
    } else if (cell.size() >= 8 && std::isdigit(static_cast<unsigned char>(cell[0]))) {
      const std::string ymd = cell.substr(0, 8);
      y = std::atoi(ymd.substr(0, 4).c_str());
      mo = std::atoi(ymd.substr(4, 2).c_str());
      d = std::atoi(ymd.substr(6, 2).c_str());
      in.seekg(8);
    }
    char c1 = 0, c2 = 0;
    in >> h >> c1 >> mi >> c2 >> s;
    // Nanoseconds since 1970 in 64 bits run out in April 2262.
    if (in.fail() || y < 1970 || y > 2261 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 ||
        h > 23 || mi < 0 || mi > 59 || !(s >= 0 && s < 61) || c1 != ':' || c2 != ':')
      fail(col, "expected a time like 2026/12/02 10:00:00.123, found '" +
                    util::printable(cell, 40) + "'");
    // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
    const int yy = y - (mo <= 2);
    const int era = yy / 400;
    const int yoe = yy - era * 400;
    const int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t days = int64_t{era} * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    return (days * 86400 + h * 3600 + mi * 60) * 1'000'000'000 +
           static_cast<int64_t>(std::llround(s * 1e9));
  }

  std::string name_;
  Trace& t_;
};

void read_query(std::istream& in, Reader& r, Trace& t) {
  std::string line;
  std::vector<std::string> header;
  std::vector<std::optional<Field>> fields;
  std::vector<Signal> present;
  int time_col = -1, index_col = -1, name_col = -1, uuid_col = -1, limit_col = -1;
  while (util::read_line(in, line, r.name_)) {
    ++r.line_no_;
    if (r.line_no_ == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (trim(line).empty()) continue;
    const auto cells = split_csv(line);
    if (header.empty() || cells == header) {  // the header, or it again (a log appended to)
      if (!header.empty()) continue;
      header = cells;
      for (std::size_t i = 0; i < header.size(); ++i) {
        const std::string name = header[i].substr(0, header[i].find(" ["));
        fields.push_back(query_field(name));
        if (fields.back()) present.push_back(fields.back()->signal);
        if (name == "timestamp") time_col = static_cast<int>(i);
        if (name == "index") index_col = static_cast<int>(i);
        if (name == "name") name_col = static_cast<int>(i);
        if (name == "uuid") uuid_col = static_cast<int>(i);
        if (name == "power.limit" || name == "enforced.power.limit")
          limit_col = static_cast<int>(i);
      }
      if (time_col < 0)
        r.fail(0, "an nvidia-smi log needs its timestamp: --query-gpu=timestamp,index,...");
      if (present.empty())
        r.fail(0, "no column powershape reads (power.draw, clocks.sm, temperature.gpu, ...)");
      continue;
    }
    if (cells.size() != header.size())
      r.fail(0, std::to_string(cells.size()) + " cells where the header has " +
                    std::to_string(header.size()));
    const int index = index_col >= 0 ? r.gpu_index(cells[index_col], index_col + 1) : 0;
    Sample s;
    s.t_ns = r.timestamp(cells[time_col], time_col + 1);
    s.gpu = r.device(index, present);
    auto& dev = t.devices[s.gpu];
    if (name_col >= 0 && dev.name.rfind("GPU ", 0) == 0) dev.name = cells[name_col];
    if (uuid_col >= 0) dev.uuid = cells[uuid_col];
    if (limit_col >= 0 && !dev.power_limit_mw.ok()) {
      if (auto w = r.value(cells[limit_col], {Signal::kPowerUsage, 1000}, limit_col + 1))
        dev.power_limit_mw = dev.enforced_power_limit_mw = Reading::of(*w);
    }
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (!fields[i]) continue;
      const auto v = r.value(cells[i], *fields[i], i + 1);
      s[fields[i]->signal] = v ? Reading::of(*v) : Reading::failed(Status::kNotSupported);
    }
    t.samples.push_back(s);
  }
  if (header.empty()) r.fail(0, "no header row");
}

void read_dmon(std::istream& in, Reader& r, Trace& t) {
  std::string line;
  std::vector<std::string> header;
  std::vector<std::optional<Field>> fields;
  std::vector<Signal> present;
  int date_col = -1, time_col = -1, gpu_col = -1;
  std::map<int, int64_t> rows_of;  // per GPU index, for logs without a time column
  while (util::read_line(in, line, r.name_)) {
    ++r.line_no_;
    if (trim(line).empty()) continue;
    if (line[0] == '#') {
      if (!header.empty()) continue;  // the units line, or the header repeated
      auto words = split_ws(line.substr(1));
      for (auto& w : words) std::transform(w.begin(), w.end(), w.begin(), ::tolower);
      header = words;
      for (std::size_t i = 0; i < header.size(); ++i) {
        fields.push_back(dmon_field(header[i]));
        if (fields.back()) present.push_back(fields.back()->signal);
        if (header[i] == "date") date_col = static_cast<int>(i);
        if (header[i] == "time") time_col = static_cast<int>(i);
        if (header[i] == "gpu") gpu_col = static_cast<int>(i);
      }
      if (gpu_col < 0) r.fail(0, "a dmon header without its gpu column");
      continue;
    }
    if (header.empty()) r.fail(0, "no header row (# gpu pwr ...)");
    const auto cells = split_ws(line);
    if (cells.size() != header.size())
      r.fail(0, std::to_string(cells.size()) + " values where the header has " +
                    std::to_string(header.size()));
    const int index = r.gpu_index(cells[gpu_col], gpu_col + 1);
    Sample s;
    s.gpu = r.device(index, present);
    if (time_col >= 0) {
      // -o T: the time of day alone; -o DT: the date before it.
      const std::string when =
          (date_col >= 0 ? cells[date_col] : std::string("19700101")) + " " + cells[time_col];
      s.t_ns = r.timestamp(when, time_col + 1);
    } else {
      s.t_ns = rows_of[index]++ * 1'000'000'000;
    }
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (!fields[i]) continue;
      const auto v = r.value(cells[i], *fields[i], i + 1);
      s[fields[i]->signal] = v ? Reading::of(*v) : Reading::failed(Status::kNotSupported);
    }
    t.samples.push_back(s);
  }
  if (header.empty()) r.fail(0, "no header row (# gpu pwr ...)");
  if (time_col < 0 && !t.samples.empty())
    t.events.push_back({0, -1,
                        "nvidia-smi dmon log without times: rows taken 1 s apart (its default "
                        "delay; -o DT records them)"});
}

}  // namespace

NvidiaSmiLog nvidia_smi_log_kind(const std::string& first_line) {
  std::string line = first_line;
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  if (line.rfind('#', 0) == 0) {
    auto words = split_ws(line.substr(1));
    for (auto& w : words) std::transform(w.begin(), w.end(), w.begin(), ::tolower);
    const bool gpu = std::find(words.begin(), words.end(), "gpu") != words.end();
    const bool dmon_col = std::any_of(
        words.begin(), words.end(), [](const std::string& w) { return dmon_field(w).has_value(); });
    return gpu && dmon_col ? NvidiaSmiLog::kDmon : NvidiaSmiLog::kNone;
  }
  for (const auto& cell : split_csv(line)) {
    const std::string name = cell.substr(0, cell.find(" ["));
    if (name == "timestamp" || query_field(name)) return NvidiaSmiLog::kQuery;
  }
  return NvidiaSmiLog::kNone;
}

Trace read_nvidia_smi_log(std::istream& in, const std::string& name, NvidiaSmiLog kind) {
  Trace t;
  t.source = kind == NvidiaSmiLog::kDmon ? "nvidia-smi dmon log" : "nvidia-smi --query-gpu log";
  Reader r(name, t);
  if (kind == NvidiaSmiLog::kDmon) {
    read_dmon(in, r, t);
  } else {
    read_query(in, r, t);
  }
  if (t.samples.empty()) throw invalid_input(name + ": no readings");
  std::stable_sort(t.samples.begin(), t.samples.end(),
                   [](const Sample& a, const Sample& b) { return a.t_ns < b.t_ns; });
  const int64_t first = t.samples.front().t_ns;
  if (t.samples.back().t_ns - first > int64_t{31} * 86'400'000'000'000)
    throw invalid_input(name + ": readings over more than 31 days");
  for (auto& s : t.samples) s.t_ns -= first;
  return t;
}

}  // namespace powershape::trace
