#pragma once
// "Did you mean": the known word closest to a mistyped one (a subcommand, an option).

#include <string>
#include <vector>

namespace powershape::util {

// The candidate nearest to `word` by edit distance (insertions, deletions, substitutions and
// swaps of neighbours), if it is within a third of the word's length (at least 1, at most 3);
// or the one candidate `word` is a prefix of. Empty when none is close.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace powershape::util
