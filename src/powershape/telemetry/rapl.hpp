#pragma once
// The CPU's energy through Linux powercap (RAPL: Intel, and AMD since Zen, both as intel-rapl
// zones), as Zeus and CodeCarbon measure a job's CPU: each package's counter and its DRAM zone's,
// read when a job starts and when it ends. A counter wraps at its max_energy_range_uj.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace powershape::telemetry {

struct RaplZone {
  std::string name;  // "package-0", "dram" (of package-0: "package-0 dram")
  std::string path;  // its energy_uj
  uint64_t max_uj = 0;
};

class RaplCounters {
 public:
  // The package and DRAM zones under `root` ($POWERSHAPE_POWERCAP, else /sys/class/powercap);
  // none where the kernel has no powercap.
  explicit RaplCounters(const std::string& root = default_root());
  static std::string default_root();

  const std::vector<RaplZone>& zones() const { return zones_; }
  // Each zone's counter (µJ); none for one that cannot be read.
  std::vector<std::optional<uint64_t>> read() const;
  // Why some zone could not be read, in one line naming the fix (energy_uj is root's alone since
  // Linux 5.10, for the PLATYPUS side channel); empty when all could.
  const std::string& unreadable() const { return unreadable_; }
  // Each zone's energy between two readings, in J (a wrap counted once); none where either
  // reading is missing.
  std::vector<std::optional<double>> joules(const std::vector<std::optional<uint64_t>>& from,
                                            const std::vector<std::optional<uint64_t>>& to) const;

 private:
  std::vector<RaplZone> zones_;
  mutable std::string unreadable_;
};

}  // namespace powershape::telemetry
