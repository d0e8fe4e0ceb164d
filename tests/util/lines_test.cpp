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
  for (std::string line; read_line(in, line, "t.csv");) {
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

// A line with no end in sight (a binary file, a device behind a link) is refused, named, before
// it takes more than 16 MiB.
TEST(Lines, ALineLongerThanTheMostIsRefused) {
  std::istringstream in(std::string(kMostLine, 'x') + "\n" + std::string(kMostLine + 1, 'y'));
  std::string line;
  ASSERT_TRUE(read_line(in, line, "t.csv"));
  EXPECT_EQ(line.size(), kMostLine);
  try {
    read_line(in, line, "t.csv");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "t.csv: a line longer than 16 MiB (not a text file?)");
  }
}

}  // namespace
}  // namespace powershape::util
