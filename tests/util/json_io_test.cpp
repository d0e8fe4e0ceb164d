#include "powershape/util/json_io.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "error_of.hpp"

namespace powershape::util {
namespace {

std::string file_of(const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() /
                 ("json_io_test_" + std::to_string(getpid()) + ".json");
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

// A field given twice in one object is named, not taken at its last value; the same name in
// sibling or nested objects is fine.
TEST(JsonIo, AFieldGivenTwiceInOneObjectIsRefused) {
  const auto twice = file_of(R"({"bands": [{"lo_hz": 1, "max_rms_w": -5, "max_rms_w": 35}]})");
  EXPECT_NE(testing::error_of([&] {
              read_json_file(twice);
            }).find("the field 'max_rms_w' is given twice in one object"),
            std::string::npos);
  const auto fine =
      file_of(R"({"a": {"x": 1}, "b": {"x": 2, "c": {"x": 3}}, "l": [{"x": 1}, {"x": 2}]})");
  EXPECT_EQ(read_json_file(fine)["b"]["c"]["x"], 3);
  std::filesystem::remove(twice);
  std::filesystem::remove(fine);
}

}  // namespace powershape::util
