#include "powershape/util/int_list.hpp"

#include <charconv>
#include <stdexcept>

#include "powershape/util/error.hpp"

namespace powershape::util {

std::vector<int> parse_int_list(const std::string& list, const std::string& subject) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto comma = list.find(',', start);
    std::string item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int v = -1;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || v < 0) {
      throw invalid_input(
          subject, "expected comma-separated non-negative integers like 0,1, found '" + list + "'");
    }
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace powershape::util
