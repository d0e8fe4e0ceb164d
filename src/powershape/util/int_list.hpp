#pragma once
#include <string>
#include <vector>

namespace powershape::util {

// Parses "0,2,3" into non-negative integers; anything else is an Error whose subject is `subject`.
std::vector<int> parse_int_list(const std::string& list, const std::string& subject);

}  // namespace powershape::util
