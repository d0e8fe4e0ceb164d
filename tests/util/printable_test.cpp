#include "powershape/util/printable.hpp"

#include <gtest/gtest.h>

namespace powershape::util {

TEST(Printable, EscapesWhatIsNotPrintableAsciiAndCutsLongText) {
  EXPECT_EQ(printable("p_mw"), "p_mw");
  EXPECT_EQ(printable(std::string("a\xff\x01\\b", 5)), "a\\xff\\x01\\x5cb");
  EXPECT_EQ(printable(std::string(1000, '9'), 4), "9999... (1000 bytes)");
  EXPECT_EQ(printable(""), "");
}

}  // namespace powershape::util
