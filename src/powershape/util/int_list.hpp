#pragma once
#include <string>
#include <vector>

namespace powershape::util {

// Parses "0,2,3" into non-negative integers; throws std::runtime_error naming `option` on anything
// else.
std::vector<int> parse_int_list(const std::string& list, const std::string& option);

}  // namespace powershape::util
