#include "powershape/telemetry/rapl.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace powershape::telemetry {
namespace fs = std::filesystem;
namespace {

// A sysfs attribute's first line; none where it cannot be read (errno says why).
std::optional<std::string> first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<uint64_t> number(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc() || end == s->data()) return std::nullopt;
  return v;
}

}  // namespace

std::string RaplCounters::default_root() {
  const char* env = std::getenv("POWERSHAPE_POWERCAP");
  return env != nullptr && *env != '\0' ? env : "/sys/class/powercap";
}

RaplCounters::RaplCounters(const std::string& root) {
  std::error_code ec;
  std::vector<fs::path> packages;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string n = e.path().filename().string();
    // intel-rapl:N is a package (or psys, the whole platform: left out, it holds the rest);
    // intel-rapl:N:M its subzones, of which DRAM lies outside the package's own count.
    if (n.rfind("intel-rapl:", 0) == 0 && n.find(':', 11) == std::string::npos)
      packages.push_back(e.path());
  }
  std::sort(packages.begin(), packages.end());
  for (const auto& pkg : packages) {
    const std::string name = first_line(pkg / "name").value_or("");
    if (name.rfind("package", 0) != 0) continue;
    zones_.push_back({name, (pkg / "energy_uj").string(),
                      number(first_line(pkg / "max_energy_range_uj")).value_or(0)});
    std::vector<fs::path> subs;
    for (const auto& e : fs::directory_iterator(pkg, ec)) {
      if (e.path().filename().string().rfind(pkg.filename().string() + ":", 0) == 0)
        subs.push_back(e.path());
    }
    std::sort(subs.begin(), subs.end());
    for (const auto& sub : subs) {
      if (first_line(sub / "name").value_or("") != "dram") continue;
      zones_.push_back({name + " dram", (sub / "energy_uj").string(),
                        number(first_line(sub / "max_energy_range_uj")).value_or(0)});
    }
  }
}

std::vector<std::optional<uint64_t>> RaplCounters::read() const {
  std::vector<std::optional<uint64_t>> out;
  for (const auto& z : zones_) {
    errno = 0;
    const auto v = number(first_line(z.path));
    if (!v && unreadable_.empty()) {
      const int err = errno;
      unreadable_ = z.path + ": " +
                    (err == EACCES ? std::string("readable by root only (Linux 5.10 on, against "
                                                 "the PLATYPUS side channel): run as root for the "
                                                 "CPU's energy")
                                   : std::string(err != 0 ? std::strerror(err) : "not a number"));
    }
    out.push_back(v);
  }
  return out;
}

std::vector<std::optional<double>> RaplCounters::joules(
    const std::vector<std::optional<uint64_t>>& from,
    const std::vector<std::optional<uint64_t>>& to) const {
  std::vector<std::optional<double>> out;
  for (std::size_t i = 0; i < zones_.size(); ++i) {
    if (i >= from.size() || i >= to.size() || !from[i] || !to[i]) {
      out.emplace_back();
      continue;
    }
    uint64_t uj = *to[i] - *from[i];
    if (*to[i] < *from[i]) {  // wrapped (once: a counter wraps in hours at the most)
      if (zones_[i].max_uj < *from[i]) {
        out.emplace_back();
        continue;
      }
      uj = zones_[i].max_uj - *from[i] + *to[i];
    }
    out.push_back(static_cast<double>(uj) * 1e-6);
  }
  return out;
}

}  // namespace powershape::telemetry
