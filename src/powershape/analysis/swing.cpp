#include "powershape/analysis/swing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <utility>

#include "powershape/util/error.hpp"

namespace powershape::analysis {
namespace {

std::size_t samples_in(double window_s, double dt_s) {
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(window_s / dt_s)));
}

std::string hz(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", f);
  return buf;
}

Verdict check(std::string name, double measured, const GridLimit& l, double rated_w,
              const std::string& unit, double window_s, double spec_window_s) {
  Verdict v;
  v.limit = std::move(name);
  v.measured = measured;
  v.unit = unit;
  v.source = l.source;
  if (l.of_rated && !(rated_w > 0)) {
    v.known = false;
    v.allowed = std::numeric_limits<double>::quiet_NaN();
    v.note = "a share of the rated power, which the recording does not give";
  } else {
    v.allowed = l.of_rated ? l.value * rated_w : l.value;
    v.pass = measured <= v.allowed;
  }
  if (std::abs(window_s - spec_window_s) > 1e-9 * spec_window_s)
    v.note += std::string(v.note.empty() ? "" : "; ") + "measured over " + hz(window_s) +
              " s, the spec's window is " + hz(spec_window_s) + " s";
  return v;
}

}  // namespace

Ramp ramp_rates(const PowerSeries& p, double window_s) {
  Ramp r;
  const std::size_t w = samples_in(window_s, p.dt_s), n = p.w.size();
  if (n < 2 * w) return r;
  std::vector<double> prefix(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + p.w[i];
  const double span_s = static_cast<double>(w) * p.dt_s;
  std::vector<double> size;
  size.reserve(n - 2 * w + 1);
  for (std::size_t i = w; i + w <= n; ++i) {
    const double before = (prefix[i] - prefix[i - w]) / static_cast<double>(w);
    const double after = (prefix[i + w] - prefix[i]) / static_cast<double>(w);
    const double rate = (after - before) / span_s;
    r.up_max_w_per_s = std::max(r.up_max_w_per_s, rate);
    r.down_max_w_per_s = std::max(r.down_max_w_per_s, -rate);
    size.push_back(std::abs(rate));
  }
  const auto k = static_cast<std::size_t>(0.99 * static_cast<double>(size.size() - 1));
  std::nth_element(size.begin(), size.begin() + k, size.end());
  r.p99_w_per_s = size[k];
  return r;
}

double max_range_w(const PowerSeries& p, double window_s) {
  const std::size_t n = p.w.size(), w = std::min(samples_in(window_s, p.dt_s), n);
  std::deque<std::size_t> hi, lo;  // indices whose values fall (hi) or rise (lo) along the deque
  double best = 0;
  for (std::size_t i = 0; i < n; ++i) {
    while (!hi.empty() && p.w[hi.back()] <= p.w[i]) hi.pop_back();
    while (!lo.empty() && p.w[lo.back()] >= p.w[i]) lo.pop_back();
    hi.push_back(i);
    lo.push_back(i);
    if (hi.front() + w <= i) hi.pop_front();
    if (lo.front() + w <= i) lo.pop_front();
    if (i + 1 >= w) best = std::max(best, p.w[hi.front()] - p.w[lo.front()]);
  }
  return best;
}

SwingOptions swing_options(const GridSpec& spec, double rated_w, double scale) {
  SwingOptions o;
  o.ramp_window_s = spec.ramp_window_s;
  o.range_window_s = spec.range_window_s;
  o.rated_w = rated_w;
  o.scale = scale;
  return o;
}

Swing analyse_swing(const PowerSeries& in, const GridSpec& spec, const SwingOptions& o) {
  if (!(o.scale > 0) || !std::isfinite(o.scale)) throw invalid_input("scale", "must be above 0");
  if (in.w.size() < 8) throw invalid_input("the power series has fewer than 8 samples");
  PowerSeries p = in;
  for (double& v : p.w) v *= o.scale;
  Swing s;
  s.scale = o.scale;
  s.rated_w = o.rated_w * o.scale;
  s.dt_s = p.dt_s;
  s.duration_s = p.duration_s();
  double sum = 0;
  s.min_w = s.max_w = p.w.front();
  for (double v : p.w) {
    sum += v;
    s.min_w = std::min(s.min_w, v);
    s.max_w = std::max(s.max_w, v);
  }
  s.mean_w = sum / static_cast<double>(p.w.size());
  s.ramp_window_s = o.ramp_window_s;
  s.range_window_s = o.range_window_s;
  s.ramp = ramp_rates(p, o.ramp_window_s);
  s.range_w = max_range_w(p, o.range_window_s);
  s.period_s = repeat_period_s(p.w, p.dt_s);
  s.spectrum = welch_psd(p.w, p.dt_s, o.segment_s);
  for (const auto& [lo, hi] : {std::pair{0.0, 0.1}, {0.1, 1.0}, {1.0, 20.0}, {20.0, INFINITY}}) {
    if (lo >= s.spectrum.nyquist_hz()) break;
    GridBand b;
    b.lo_hz = lo;
    b.hi_hz = hi;
    s.overview.push_back({b, band_share(s.spectrum, lo, hi), band_rms(s.spectrum, lo, hi),
                          std::min(hi, s.spectrum.nyquist_hz())});
  }
  const bool short_for_ramp = p.w.size() < 2 * samples_in(o.ramp_window_s, p.dt_s);
  // A window of fewer than two samples sees no ramp or range at all: unknown, not a pass.
  const bool coarse_ramp = o.ramp_window_s < 2 * p.dt_s,
             coarse_range = o.range_window_s < 2 * p.dt_s;
  if (spec.ramp_up)
    s.verdicts.push_back(check("ramp up", s.ramp.up_max_w_per_s, *spec.ramp_up, s.rated_w, "W/s",
                               o.ramp_window_s, spec.ramp_window_s));
  if (spec.ramp_down)
    s.verdicts.push_back(check("ramp down", s.ramp.down_max_w_per_s, *spec.ramp_down, s.rated_w,
                               "W/s", o.ramp_window_s, spec.ramp_window_s));
  auto coarse = [&](Verdict& v) {
    v.known = false;
    v.pass = false;
    v.note = "the recording's " + hz(p.dt_s) + " s between samples is too coarse for its window";
  };
  for (auto& v : s.verdicts) {
    if (coarse_ramp) {
      coarse(v);
    } else if (short_for_ramp) {
      v.known = false;
      v.pass = false;
      v.note = "the recording is shorter than two ramp windows";
    }
  }
  if (spec.range) {
    s.verdicts.push_back(check("range", s.range_w, *spec.range, s.rated_w, "W", o.range_window_s,
                               spec.range_window_s));
    if (coarse_range) coarse(s.verdicts.back());
  }
  for (const auto& b : spec.bands) {
    BandResult r{b, band_share(s.spectrum, b.lo_hz, b.hi_hz),
                 band_rms(s.spectrum, b.lo_hz, b.hi_hz),
                 std::min(b.hi_hz, s.spectrum.nyquist_hz())};
    std::string note;
    if (r.seen_hi_hz < b.hi_hz)
      note = "seen up to " + hz(r.seen_hi_hz) + " Hz (the recording's Nyquist frequency)";
    if (b.lo_hz < s.spectrum.df_hz)
      note += std::string(note.empty() ? "" : "; ") + "resolved from " + hz(s.spectrum.df_hz) +
              " Hz (a longer recording resolves lower)";
    const bool unseen = r.seen_hi_hz <= b.lo_hz;
    const std::string edges = hz(b.lo_hz) + "-" + hz(b.hi_hz) + " Hz";
    auto add = [&](Verdict v) {
      if (!note.empty()) v.note = note + (v.note.empty() ? "" : "; " + v.note);
      if (unseen) {
        v.known = false;
        v.pass = false;
        v.note += std::string(v.note.empty() ? "" : "; ") + "none of the band is seen";
      }
      if (v.known && !v.pass) r.failed = true;
      if (!v.known) r.unknown = true;
      s.verdicts.push_back(std::move(v));
    };
    if (b.max_share) {
      Verdict v;
      v.limit = "band " + edges;
      v.measured = r.share;
      v.allowed = *b.max_share;
      v.unit = "share";
      v.source = b.source;
      v.pass = r.share <= *b.max_share;
      add(std::move(v));
    }
    if (b.max_rms) {
      Verdict v = check("rms " + edges, r.rms_w, *b.max_rms, s.rated_w, "W", 1, 1);
      // Part of the band unseen: its RMS can only grow with what is missing, so a pass is not
      // known; a failure is.
      if (!unseen && r.seen_hi_hz < b.hi_hz && v.known && v.pass) {
        v.known = false;
        v.pass = false;
        v.note = "the band is seen in part, and what is seen is within the limit";
      }
      add(std::move(v));
    }
    s.bands.push_back(std::move(r));
  }
  return s;
}

nlohmann::json to_json(const Swing& s, std::size_t max_bins) {
  using nlohmann::json;
  json verdicts = json::array();
  for (const auto& v : s.verdicts) {
    verdicts.push_back({{"limit", v.limit},
                        {"measured", v.measured},
                        {"allowed", std::isfinite(v.allowed) ? json(v.allowed) : json(nullptr)},
                        {"unit", v.unit},
                        {"pass", v.known ? json(v.pass) : json(nullptr)},
                        {"source", v.source},
                        {"note", v.note}});
  }
  json bands = json::array();
  for (const auto& b : s.bands) {
    json max_rms = nullptr;
    if (b.band.max_rms && (!b.band.max_rms->of_rated || s.rated_w > 0))
      max_rms = b.band.max_rms->value * (b.band.max_rms->of_rated ? s.rated_w : 1.0);
    bands.push_back({{"lo_hz", b.band.lo_hz},
                     {"hi_hz", b.band.hi_hz},
                     {"share", b.share},
                     {"max_share", b.band.max_share ? json(*b.band.max_share) : json(nullptr)},
                     {"rms_w", b.rms_w},
                     {"max_rms_w", max_rms},
                     {"pass", b.failed    ? json(false)
                              : b.unknown ? json(nullptr)
                                          : json(true)},
                     {"seen_hi_hz", b.seen_hi_hz}});
  }
  json overview = json::array();
  for (const auto& b : s.overview)
    overview.push_back({{"lo_hz", b.band.lo_hz},
                        {"hi_hz", std::isfinite(b.band.hi_hz) ? json(b.band.hi_hz) : json(nullptr)},
                        {"share", b.share}});
  // Adjacent bins averaged so that the plot stays small; their density is kept.
  const std::size_t bins = s.spectrum.psd.size();
  const std::size_t group =
      std::max<std::size_t>(1, (bins + max_bins - 1) / std::max<std::size_t>(max_bins, 1));
  json freq = json::array(), psd = json::array();
  for (std::size_t k = 1; k < bins; k += group) {
    double acc = 0;
    std::size_t n = 0;
    for (std::size_t j = k; j < std::min(bins, k + group); ++j, ++n) acc += s.spectrum.psd[j];
    freq.push_back(s.spectrum.df_hz * (static_cast<double>(k) + 0.5 * static_cast<double>(n - 1)));
    psd.push_back(acc / static_cast<double>(n));
  }
  return {{"scale", s.scale},
          {"rated_w", s.rated_w > 0 ? json(s.rated_w) : json(nullptr)},
          {"resolution_s", s.dt_s},
          {"duration_s", s.duration_s},
          {"power_w", {{"mean", s.mean_w}, {"min", s.min_w}, {"max", s.max_w}}},
          {"period_s", s.period_s > 0 ? json(s.period_s) : json(nullptr)},
          {"ramp_w_per_s",
           {{"window_s", s.ramp_window_s},
            {"up_max", s.ramp.up_max_w_per_s},
            {"down_max", s.ramp.down_max_w_per_s},
            {"p99", s.ramp.p99_w_per_s}}},
          {"range_w", {{"window_s", s.range_window_s}, {"max", s.range_w}}},
          {"bands", bands},
          {"overview", overview},
          {"spectrum", {{"df_hz", s.spectrum.df_hz}, {"freq_hz", freq}, {"psd_w2_per_hz", psd}}},
          {"verdicts", verdicts}};
}

}  // namespace powershape::analysis
