#include "powershape/analysis/power_input.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "powershape/trace/csv_reader.hpp"
#include "powershape/util/atomic_file.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/input_file.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/lines.hpp"

namespace powershape::analysis {
namespace {

using nlohmann::json;

// Far above any site (a 100,000-GPU fleet draws ~1e8 W): a value past it is a broken file.
constexpr double kMaxWatts = 1e11;

struct Part {
  std::vector<Readings> sources;
  double rated_w = 0;
  int gpus = 0;
  std::string signal;
  bool wall_clock = false;
  // Reading times are seconds from this moment (ns on the wall clock where known): a wall time
  // held in a double whole would keep only ~0.2 us, a relative one keeps far more.
  int64_t origin_ns = 0;
  double interval_s = 0;
  std::vector<std::pair<double, double>> regions_s;  // the named regions, s from origin_ns
};

// In whole nanoseconds, as the readings were taken (and as a trace streamed gives it,
// power_stream.cpp): a gap's last bits in seconds are the rounding of two times, not the gap.
double median_interval(const Readings& r) {
  std::vector<double> gaps;
  for (std::size_t i = 1; i < r.t_s.size(); ++i)
    if (r.t_s[i] > r.t_s[i - 1]) gaps.push_back(std::round((r.t_s[i] - r.t_s[i - 1]) * 1e9));
  if (gaps.empty()) return 0;
  const auto mid = gaps.begin() + static_cast<std::ptrdiff_t>((gaps.size() - 1) / 2);
  std::nth_element(gaps.begin(), mid, gaps.end());
  return *mid * 1e-9;
}

double watts(const std::string& path, const std::string& where, double v) {
  if (!std::isfinite(v) || v < 0 || v > kMaxWatts)
    throw invalid_input(path + ": " + where + ": power " + std::to_string(v) +
                        " W is not a plausible reading (0 to 1e11 W)");
  return v;
}

Part read_prometheus(const std::string& path) {
  const json j = util::read_json_file(path);
  const json* result = nullptr;
  if (j.is_object() && j.contains("data") && j.at("data").is_object() &&
      j.at("data").value("resultType", "") == "matrix" && j.at("data").contains("result") &&
      j.at("data").at("result").is_array())
    result = &j.at("data").at("result");
  if (result == nullptr)
    throw invalid_input(path + ": not a Prometheus range query's JSON (data.resultType matrix)");
  Part p;
  p.wall_clock = true;
  int gpus = 0;  // a node's series says how many GPUs it sums (powershape_node_power_watts)
  for (std::size_t i = 0; i < result->size(); ++i) {
    const json& series = (*result)[i];
    const std::string where = "data.result[" + std::to_string(i) + "]";
    if (!series.is_object() || !series.contains("values") || !series.at("values").is_array())
      throw invalid_input(path + ": " + where + ": no 'values' list");
    std::string name = "power";
    if (series.contains("metric") && series.at("metric").is_object())
      name = series.at("metric").value("__name__", name);
    if (!p.signal.empty() && name != p.signal)
      throw invalid_input(path + ": two metrics, " + p.signal + " and " + name +
                          ": query one power metric (they would be added)");
    p.signal = name;
    int holds = 1;
    if (series.contains("metric") && series.at("metric").is_object()) {
      const json& label = series.at("metric").value("gpus", json());
      if (label.is_string()) {
        const std::string g = label.get<std::string>();
        std::size_t used = 0;
        int n = 0;
        try {
          n = std::stoi(g, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != g.size() || g.empty() || n < 1 || n > 1'000'000)
          throw invalid_input(path + ": " + where + ": label gpus='" + g + "' is not a count");
        holds = n;
      }
    }
    gpus += holds;
    Readings r;
    for (const json& v : series.at("values")) {
      if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_string())
        throw invalid_input(path + ": " + where + ": a value is not [time, \"number\"]");
      const std::string text = v[1].get<std::string>();
      if (text == "NaN") continue;  // Prometheus's gap
      double w = 0;
      try {
        w = std::stod(text);
      } catch (const std::exception&) {
        throw invalid_input(path + ": " + where + ": '" + text + "' is not a number");
      }
      double t = v[0].get<double>();
      if (!std::isfinite(t) || t < 0 || t > 4e9)
        throw invalid_input(path + ": " + where + ": a time is not a Unix time in seconds");
      if (p.origin_ns == 0) p.origin_ns = static_cast<int64_t>(std::floor(t)) * 1'000'000'000;
      t -= static_cast<double>(p.origin_ns) * 1e-9;
      if (!r.t_s.empty() && !(t > r.t_s.back()))
        throw invalid_input(path + ": " + where + ": times do not increase");
      r.t_s.push_back(t);
      r.w.push_back(watts(path, where, w));
    }
    p.interval_s = std::max(p.interval_s, median_interval(r));
    p.sources.push_back(std::move(r));
  }
  p.gpus = gpus;
  if (p.sources.empty()) throw invalid_input(path + ": the query returned no series");
  return p;
}

Part read_meter(const std::string& path, std::istream& in) {
  Part p;
  p.signal = "power_w";
  Readings r;
  std::string line;
  std::size_t line_no = 1;  // the header was read
  while (util::read_line(in, line, path)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(line_no);
    const auto comma = line.find(',');
    // A number and nothing after it ("12.5x" is no reading).
    const auto number = [](const std::string& text) {
      try {
        std::size_t used = 0;
        const double v = std::stod(text, &used);
        return used == text.size() ? v : NAN;
      } catch (const std::exception&) {
        return static_cast<double>(NAN);
      }
    };
    const double t = number(line.substr(0, comma));
    const double w = comma == std::string::npos ? NAN : number(line.substr(comma + 1));
    if (comma == std::string::npos || !std::isfinite(t))
      throw invalid_input(path + ": " + where + ": expected t_s,power_w");
    if (!r.t_s.empty() && !(t > r.t_s.back()))
      throw invalid_input(path + ": " + where + ": times do not increase");
    r.t_s.push_back(t);
    r.w.push_back(watts(path, where, w));
  }
  p.interval_s = median_interval(r);
  p.sources.push_back(std::move(r));
  return p;
}

// The power readings of a trace's GPUs from `from` to `to` (steady ns).
Part part_of(const trace::Trace& t, int64_t from, int64_t to) {
  Part p;
  const telemetry::Signal s = power_signal(t);
  p.signal = std::string(telemetry::spec(s).name);
  p.wall_clock = t.wall_minus_steady_ns != 0;
  const int64_t first_ns = t.samples.empty() ? 0 : t.samples.front().t_ns;
  p.origin_ns = (p.wall_clock ? t.wall_minus_steady_ns : 0) + first_ns;
  std::vector<int> seen;
  for (const auto& row : t.samples) {
    if (!row[s].ok() || row.t_ns < from || row.t_ns > to) continue;
    auto at = std::find(seen.begin(), seen.end(), row.gpu);
    if (at == seen.end()) {
      seen.push_back(row.gpu);
      p.sources.emplace_back();
      at = seen.end() - 1;
    }
    Readings& r = p.sources[static_cast<std::size_t>(at - seen.begin())];
    r.t_s.push_back(static_cast<double>(row.t_ns - first_ns) * 1e-9);
    r.w.push_back(static_cast<double>(row[s].value) * 1e-3);
  }
  // Driver-buffer rows follow the poll that harvested them: put each GPU's readings in time
  // order, one a moment.
  for (auto& r : p.sources) {
    std::vector<std::size_t> order(r.t_s.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return r.t_s[a] < r.t_s[b]; });
    Readings sorted;
    for (std::size_t i : order) {
      if (!sorted.t_s.empty() && r.t_s[i] <= sorted.t_s.back()) continue;
      sorted.t_s.push_back(r.t_s[i]);
      sorted.w.push_back(r.w[i]);
    }
    r = std::move(sorted);
  }
  // A GPU read once in the span is no series: it neither adds power nor counts as a GPU.
  for (std::size_t i = p.sources.size(); i-- > 0;) {
    if (p.sources[i].t_s.size() >= 2) continue;
    p.sources.erase(p.sources.begin() + static_cast<std::ptrdiff_t>(i));
    seen.erase(seen.begin() + static_cast<std::ptrdiff_t>(i));
  }
  p.gpus = static_cast<int>(seen.size());
  p.rated_w = rated_power_w(t.devices, seen);
  for (const auto& r : p.sources) p.interval_s = std::max(p.interval_s, median_interval(r));
  return p;
}

Part read_trace(const std::string& path, const std::string& region) {
  const trace::Trace t = trace::read_csv(path);
  int64_t from = INT64_MIN, to = INT64_MAX;
  if (!region.empty()) {
    bool found = false;
    for (const auto& r : t.regions) {
      if (r.name != region) continue;
      from = found ? std::min(from, r.begin_ns) : r.begin_ns;
      to = found ? std::max(to, r.end_ns) : r.end_ns;
      found = true;
    }
    if (!found) throw invalid_input(path + ": no region named '" + region + "'");
  }
  try {
    Part p = part_of(t, from, to);
    const int64_t first_ns = t.samples.empty() ? 0 : t.samples.front().t_ns;
    for (const auto& r : t.regions)
      if (r.name == region)
        p.regions_s.emplace_back(static_cast<double>(r.begin_ns - first_ns) * 1e-9,
                                 static_cast<double>(r.end_ns - first_ns) * 1e-9);
    return p;
  } catch (const Error& e) {
    throw invalid_input(path + ": " + e.what());
  }
}

Part read_part(const std::string& path, const std::string& region) {
  std::ifstream in;
  util::open_input(path, in);
  std::string first;
  util::read_line(in, first, path);
  if (!first.empty() && first.back() == '\r') first.pop_back();
  const auto lead = first.find_first_not_of(" \t\xEF\xBB\xBF");
  const bool trace = !(lead != std::string::npos && first[lead] == '{') && first != "t_s,power_w";
  if (!trace && !region.empty())
    throw invalid_input(path + ": has no regions (only traces do): '" + region +
                        "' cannot be found");
  if (lead != std::string::npos && first[lead] == '{') return read_prometheus(path);
  if (first == "t_s,power_w") return read_meter(path, in);
  return read_trace(path, region);
}

}  // namespace

PowerInput read_power_inputs(const std::vector<std::string>& paths, double dt_s,
                             const std::string& region) {
  if (paths.empty()) throw invalid_input("no recording given");
  std::vector<Part> parts;
  for (const auto& path : paths) parts.push_back(read_part(path, region));
  PowerInput out;
  bool all_wall = true;
  bool rated_known = true;
  for (const auto& p : parts) {
    out.reading_interval_s = std::max(out.reading_interval_s, p.interval_s);
    out.gpus += p.gpus;
    out.rated_w += p.rated_w;
    rated_known = rated_known && p.rated_w > 0;
    all_wall = all_wall && p.wall_clock;
    if (out.signal.find(p.signal) == std::string::npos)
      out.signal += (out.signal.empty() ? "" : ", ") + p.signal;
  }
  if (!rated_known) out.rated_w = 0;
  const double dt = dt_s > 0 ? dt_s : std::max(out.reading_interval_s, 1e-3);
  int64_t base_ns = parts.front().origin_ns;
  for (const auto& p : parts) base_ns = std::min(base_ns, p.origin_ns);
  std::vector<PowerSeries> series;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    try {
      series.push_back(sum_readings(parts[i].sources, dt));
    } catch (const Error& e) {
      throw invalid_input(paths[i] + ": " + e.what());
    }
    const double t0 = series.back().t0_s;
    if (all_wall)
      series.back().t0_s += static_cast<double>(parts[i].origin_ns - base_ns) * 1e-9;
    else
      series.back().t0_s = 0;
    const double shift = series.back().t0_s - t0;  // the regions move with their series
    if (out.regions_s.empty())
      for (const auto& [b, e] : parts[i].regions_s)
        out.regions_s.emplace_back(b + shift, e + shift);
  }
  out.aligned_by_start = !all_wall && parts.size() > 1;
  out.power = sum_on_time(series);
  return out;
}

void write_power_csv(const std::string& path, const PowerSeries& p) {
  std::string text = "t_s,power_w\n";
  text.reserve(text.size() + p.w.size() * 24);
  char row[64];
  for (std::size_t i = 0; i < p.w.size(); ++i) {
    const int n = std::snprintf(row, sizeof row, "%.6f,%.1f\n",
                                p.t0_s + p.dt_s * static_cast<double>(i), p.w[i]);
    text.append(row, static_cast<std::size_t>(n));
  }
  util::write_file_atomic(path, text);
}

double rated_power_w(const std::vector<telemetry::DeviceInfo>& devices,
                     const std::vector<int>& gpus) {
  double w = 0;
  for (int g : gpus) {
    for (const auto& d : devices) {
      if (d.index == g && d.power_limit_mw.ok()) {
        w += static_cast<double>(d.power_limit_mw.value) * 1e-3;
        break;
      }
    }
  }
  // A limit known for some GPUs only would understate the rated power: none then.
  const auto known = std::count_if(devices.begin(), devices.end(), [&](const auto& d) {
    return d.power_limit_mw.ok() && std::find(gpus.begin(), gpus.end(), d.index) != gpus.end();
  });
  return known == static_cast<std::ptrdiff_t>(gpus.size()) ? w : 0;
}

PowerInput trace_power(const trace::Trace& t, int64_t from_ns, int64_t to_ns, double dt_s) {
  const Part p = part_of(t, from_ns, to_ns);
  PowerInput out;
  out.gpus = p.gpus;
  out.rated_w = p.rated_w;
  out.signal = p.signal;
  out.reading_interval_s = p.interval_s;
  out.power = sum_readings(p.sources, dt_s > 0 ? dt_s : std::max(p.interval_s, 1e-3));
  return out;
}

}  // namespace powershape::analysis
