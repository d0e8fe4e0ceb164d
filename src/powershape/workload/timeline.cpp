#include "powershape/workload/timeline.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "powershape/util/error.hpp"
#include "powershape/util/input_file.hpp"
#include "powershape/util/lines.hpp"
#include "powershape/util/printable.hpp"

namespace powershape::workload {
namespace {

// Splits one CSV line, honouring double quotes (kernel names hold commas).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

bool is_product(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const char* k : {"gemm", "gmma", "mma", "matmul", "cutlass", "xmma"}) {
    if (name.find(k) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Plan plan_from_timeline(std::istream& in, const std::string& name, double flops_per_s,
                        double bytes_per_s) {
  if (!(flops_per_s > 0 && bytes_per_s > 0))
    throw invalid_input("timeline: rates must be positive");
  std::string line;
  int line_no = 0;
  int start_col = -1, dur_col = -1, name_col = -1;
  auto fail = [&](const std::string& what) {
    throw invalid_input(name + ":" + std::to_string(line_no) + ": " + what);
  };
  struct Kernel {
    int64_t start, duration;
    std::string name;
  };
  std::vector<Kernel> kernels;
  while (util::read_line(in, line, name)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto c = cells(line);
    if (start_col < 0) {
      for (int i = 0; i < static_cast<int>(c.size()); ++i) {
        if (c[i] == "Start (ns)" || c[i] == "start_ns") start_col = i;
        if (c[i] == "Duration (ns)" || c[i] == "duration_ns") dur_col = i;
        if (c[i] == "Name" || c[i] == "name") name_col = i;
      }
      if (start_col < 0 || dur_col < 0 || name_col < 0) {
        fail(
            "expected a header with start, duration and name columns (\"Start (ns)\",\"Duration "
            "(ns)\",\"Name\" or start_ns,duration_ns,name)");
      }
      continue;
    }
    if (static_cast<int>(c.size()) <= std::max({start_col, dur_col, name_col}))
      fail("too few cells");
    auto number = [&](int col) {
      int64_t v = 0;
      const std::string& s = c[static_cast<std::size_t>(col)];
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0) {
        fail("column " + std::to_string(col + 1) + ": expected a non-negative integer, found '" +
             util::printable(s) + "'");
      }
      return v;
    };
    kernels.push_back({number(start_col), number(dur_col), c[static_cast<std::size_t>(name_col)]});
  }
  if (kernels.empty()) fail("no kernels");
  if (std::none_of(kernels.begin(), kernels.end(), [](const Kernel& k) { return k.duration > 0; }))
    fail("no kernel has a positive duration");
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const Kernel& a, const Kernel& b) { return a.start < b.start; });
  // Times relative to the first kernel, bounded as the simulator's runs are (a day): recorded
  // timestamps may be anywhere in int64_t, and their sums must not overflow.
  constexpr int64_t kMaxSpanNs = 86'400'000'000'000;
  const int64_t first = kernels.front().start;
  for (const auto& k : kernels) {
    if (k.start - first > kMaxSpanNs || k.duration > kMaxSpanNs)
      fail("kernel '" + util::printable(k.name, 60) + "' lies more than a day from the first");
  }
  Plan plan;
  plan.name = "timeline " + name + " (" + std::to_string(kernels.size()) + " kernels)";
  int64_t busy_until = 0;
  for (const auto& k : kernels) {
    const int64_t start = k.start - first;
    if (start > busy_until) {
      Phase gap;
      gap.name = "gap";
      gap.kind = PhaseKind::kIdle;
      gap.seconds = static_cast<double>(start - busy_until) * 1e-9;
      plan.phases.push_back(gap);
    }
    if (k.duration > 0) {
      Phase ph;
      ph.launched = false;  // its recorded time includes its launch
      ph.name = k.name;
      const double secs = static_cast<double>(k.duration) * 1e-9;
      if (is_product(k.name)) {
        ph.kind = PhaseKind::kCompute;
        ph.flops = secs * flops_per_s;
      } else {
        ph.kind = PhaseKind::kMemory;
        ph.bytes = secs * bytes_per_s;
      }
      plan.phases.push_back(ph);
    }
    busy_until = std::max(busy_until, start + k.duration);
  }
  return plan;
}

Plan read_timeline(const std::string& path, double flops_per_s, double bytes_per_s) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw invalid_input(path + ": a folder, not a kernel timeline");
  std::ifstream in;
  util::open_input(path, in);
  return plan_from_timeline(in, path, flops_per_s, bytes_per_s);
}

}  // namespace powershape::workload
