#include "powershape/util/lines.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace powershape::util {
namespace {

std::vector<std::string> lines_of(const std::string& text, bool* last_cut = nullptr) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string line; read_line(in, line);) {
    out.push_back(line);
    if (last_cut != nullptr) *last_cut = in.eof();
  }
  return out;
}

TEST(Lines, EveryKindOfLineEnd) {
  const std::vector<std::string> want = {"a", "", "b", "c"};
  EXPECT_EQ(lines_of("a\n\nb\nc\n"), want);
  EXPECT_EQ(lines_of("a\r\n\r\nb\r\nc\r\n"), want);
  EXPECT_EQ(lines_of("a\r\rb\rc\r"), want);
  EXPECT_EQ(lines_of("a\n\r\nb\rc"), want);
}

// As std::getline: a last line without its end is returned with the eof bit set.
TEST(Lines, ACutOffLastLineIsSaidSo) {
  bool cut = false;
  EXPECT_EQ(lines_of("a\nb", &cut), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(cut);
  EXPECT_EQ(lines_of("a\nb\n", &cut), (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(cut);
  EXPECT_TRUE(lines_of("").empty());
}

}  // namespace
}  // namespace powershape::util
