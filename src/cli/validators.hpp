#pragma once
// Option values that bound a run: every number an option takes is finite and in a range that keeps
// the run finite in time and memory. CLI11's Range lets NaN through (its comparisons are false).
#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "powershape/trace/recording_name.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/output_lock.hpp"

namespace powershape::cli {

// A recording named as the docs name it, from any folder ("h200/gemm_sustained": the shipped
// data/h200/gemm_sustained_trace.csv); a file of that name comes first.
inline std::string recording_named(std::string s) { return trace::recording_path(s); }

// The options that name an output, which may be "-" (standard output): main counts them, and
// sends the tables to standard error when one is. Only these: "-" is also a region's name.
inline std::set<const CLI::Option*>& output_options() {
  static std::set<const CLI::Option*> options;
  return options;
}
inline CLI::Option* output(CLI::Option* o) {
  output_options().insert(o);
  // An empty name would read as no output asked for: the run would write nothing, silently.
  return o->check(CLI::Validator(
      [](std::string& v) { return v.empty() ? std::string("expected a file name, found ''") : ""; },
      "FILE"));
}

// A library check as an option's validator: its message, and CLI11's usage error (exit 2), before
// the job runs.
inline CLI::Validator checked_by(std::function<void(const std::string&)> check) {
  return CLI::Validator(
      [check](std::string& s) -> std::string {
        try {
          check(s);
        } catch (const std::exception& e) {
          std::string why = e.what();
          const auto colon = why.find(": ");  // the subject the library named is the option's
          return colon != std::string::npos ? why.substr(colon + 2) : why;
        }
        return {};
      },
      "");
}

inline CLI::Validator finite_in(double lo, double hi) {
  std::ostringstream range;
  range << "[" << lo << ", " << hi << "]";
  return CLI::Validator(
      [lo, hi, r = range.str()](std::string& s) -> std::string {
        double v = 0;
        try {
          std::size_t used = 0;
          v = std::stod(s, &used);
          if (used != s.size()) return "expected a number in " + r + ", found '" + s + "'";
        } catch (const std::exception&) {
          return "expected a number in " + r + ", found '" + s + "'";
        }
        if (!std::isfinite(v) || v < lo || v > hi)
          return "expected a number in " + r + ", found " + s;
        return {};
      },
      "in " + range.str());
}

// A seed: a whole number that fits 64 bits unsigned (CLI11 would wrap -1 into 2^64 - 1).
inline CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        uint64_t v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || p != s.data() + s.size())
          return "expected a whole number from 0 to 18446744073709551615, found '" + s + "'";
        return {};
      },
      "0 to 2^64 - 1");
}

}  // namespace powershape::cli
