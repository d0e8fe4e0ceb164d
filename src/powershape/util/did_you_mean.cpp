#include "powershape/util/did_you_mean.hpp"

#include <algorithm>
#include <cstddef>

namespace powershape::util {
namespace {

// Optimal string alignment distance: Levenshtein plus a swap of two neighbours as one edit
// (`--chucks`, `--chunsk`), the typos people make.
std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.empty() || word.size() > 64) return "";  // nothing to suggest for a pasted paragraph
  const std::size_t allowed = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::string best;
  std::size_t best_d = allowed + 1;
  for (const auto& c : candidates) {
    const std::size_t dist = distance(word, c);
    if (dist < best_d) best_d = dist, best = c;
  }
  if (!best.empty()) return best;
  std::string prefixed;
  for (const auto& c : candidates) {
    if (c.rfind(word, 0) != 0) continue;
    if (!prefixed.empty()) return "";  // more than one: no single suggestion
    prefixed = c;
  }
  return prefixed;
}

}  // namespace powershape::util
