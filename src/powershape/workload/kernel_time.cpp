#include "powershape/workload/kernel_time.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "powershape/util/atomic_file.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/input_file.hpp"
#include "powershape/util/lines.hpp"
#include "powershape/util/printable.hpp"

namespace powershape::workload {
namespace {

constexpr const char* kHeader = "config,index,name,m,n,k,bytes,ms,sm_clock_mhz,real_mhz";
// Recordings before the clock probe ran beside the kernels have no real_mhz column.
constexpr const char* kHeaderV1 = "config,index,name,m,n,k,bytes,ms,sm_clock_mhz";

// Config names hold no commas (they are "lmhead NxDxV chunks=C"); a name that does is refused
// rather than quoted, so that the file stays one split per row.
void check_cell(const std::string& s, const char* what) {
  if (s.find_first_of(",\n\r") != std::string::npos)
    throw invalid_input(std::string("kernel times: a ") + what + " with a comma or newline");
}

}  // namespace

void write_kernel_times(const std::string& path, const std::vector<KernelTime>& ks) {
  std::string f = std::string(kHeader) + '\n';
  char line[512];
  for (const auto& k : ks) {
    check_cell(k.config, "config");
    check_cell(k.name, "name");
    std::snprintf(line, sizeof line, ",%d,%s,%lld,%lld,%lld,%.6g,%.6f,%.1f,%.1f\n", k.index,
                  k.name.c_str(), static_cast<long long>(k.m), static_cast<long long>(k.n),
                  static_cast<long long>(k.k), k.bytes, k.ms, k.sm_clock_mhz, k.real_mhz);
    f += k.config + line;
  }
  util::write_file_atomic(path, f);
}

std::vector<KernelTime> read_kernel_times(std::istream& in, const std::string& name) {
  std::vector<KernelTime> out;
  std::string line;
  int line_no = 0;
  std::size_t cells = 10;
  const auto fail = [&](const std::string& what) {
    throw invalid_input(name + ":" + std::to_string(line_no) + ": " + what);
  };
  while (util::read_line(in, line, name)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1) {
      if (line == kHeaderV1)
        cells = 9;
      else if (line != kHeader)
        fail(std::string("expected the header ") + kHeader);
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> c;
    for (std::size_t s = 0;;) {
      const auto e = line.find(',', s);
      c.push_back(line.substr(s, e == std::string::npos ? std::string::npos : e - s));
      if (e == std::string::npos) break;
      s = e + 1;
    }
    if (c.size() != cells)
      fail("expected " + std::to_string(cells) + " cells, found " + std::to_string(c.size()));
    const auto num = [&](const std::string& s, const char* what) {
      double v = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0)
        fail(std::string(what) + ": expected a number >= 0, found '" + util::printable(s) + "'");
      return v;
    };
    KernelTime k;
    k.config = c[0];
    k.index = static_cast<int>(num(c[1], "index"));
    k.name = c[2];
    const auto dim = [&](const std::string& s, const char* what) {
      const double v = num(s, what);
      if (v > 1e12 || v != std::floor(v)) fail(std::string(what) + ": expected a whole size");
      return static_cast<int64_t>(v);
    };
    k.m = dim(c[3], "m");
    k.n = dim(c[4], "n");
    k.k = dim(c[5], "k");
    k.bytes = num(c[6], "bytes");
    k.ms = num(c[7], "ms");
    k.sm_clock_mhz = num(c[8], "sm_clock_mhz");
    if (cells == 10) k.real_mhz = num(c[9], "real_mhz");
    if (k.ms <= 0) fail("ms: a kernel takes some time");
    out.push_back(std::move(k));
  }
  if (line_no == 0) fail("empty; expected the header " + std::string(kHeader));
  return out;
}

std::vector<KernelTime> read_kernel_times(const std::string& path) {
  std::ifstream f;
  util::open_input(path, f);
  return read_kernel_times(f, path);
}

}  // namespace powershape::workload
