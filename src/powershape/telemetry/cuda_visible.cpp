#include "powershape/telemetry/cuda_visible.hpp"

#include <algorithm>
#include <charconv>

#include "powershape/util/error.hpp"
#include "powershape/util/printable.hpp"

namespace powershape::telemetry {

std::optional<std::vector<int>> cuda_visible(const char* value,
                                             const std::vector<std::string>& uuids) {
  if (value == nullptr) return std::nullopt;
  const std::string all(value);
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= all.size()) {
    const std::size_t comma = std::min(all.find(',', start), all.size());
    std::string entry = all.substr(start, comma - start);
    entry.erase(0, entry.find_first_not_of(' '));
    entry.erase(entry.find_last_not_of(' ') + 1);
    int found = -1;
    int index = 0;
    const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
    if (!entry.empty() && ec == std::errc() && end == entry.data() + entry.size()) {
      if (index >= 0 && static_cast<std::size_t>(index) < uuids.size()) found = index;
    } else if (entry.rfind("GPU-", 0) == 0) {
      // A UUID or a prefix of one that no other GPU shares.
      for (std::size_t i = 0; i < uuids.size(); ++i) {
        if (uuids[i].rfind(entry, 0) != 0) continue;
        found = found == -1 ? static_cast<int>(i) : -2;
      }
    }
    if (found < 0 || std::find(out.begin(), out.end(), found) != out.end()) break;
    out.push_back(found);
    start = comma + 1;
  }
  if (out.empty())
    throw invalid_input("CUDA_VISIBLE_DEVICES='" + util::printable(all, 60) +
                        "' names none of the " + std::to_string(uuids.size()) +
                        " GPUs NVML sees (an index 0.." + std::to_string(uuids.size() - 1) +
                        " or a GPU- UUID; MIG instances are not watched); unset it, or name the "
                        "GPUs to watch");
  return out;
}

}  // namespace powershape::telemetry
