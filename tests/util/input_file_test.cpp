#include "powershape/util/input_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "error_of.hpp"

namespace powershape::util {
namespace {

struct Scratch {
  std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("input-file-" + std::to_string(getpid()));
  Scratch() { std::filesystem::create_directories(d); }
  ~Scratch() { std::filesystem::remove_all(d); }
  std::string operator/(const std::string& name) const { return (d / name).string(); }
};

std::string open_error(const std::string& path) {
  return testing::error_of([&] {
    std::ifstream in;
    open_input(path, in);
  });
}

// A regular file reads, through a link too (a link to read is the user's own choice).
TEST(InputFile, ARegularFileReadsThroughALinkToo) {
  Scratch s;
  { std::ofstream(s / "trace.csv") << "t_s,p_mw\n"; }
  std::filesystem::create_symlink(s / "trace.csv", s / "link");
  for (const auto& path : {s / "trace.csv", s / "link"}) {
    std::ifstream in;
    open_input(path, in);
    std::string line;
    ASSERT_TRUE(std::getline(in, line)) << path;
    EXPECT_EQ(line, "t_s,p_mw");
  }
}

// What would never end (/dev/zero), block forever (a FIFO without a writer) or is no file at all
// is refused at once, by name, with why.
TEST(InputFile, WhatIsNotARegularFileIsRefusedAtOnce) {
  Scratch s;
  EXPECT_EQ(open_error(s / "missing"),
            "cannot read " + (s / "missing") + ": No such file or directory");
  EXPECT_EQ(open_error(s.d.string()), "cannot read " + s.d.string() + ": it is a folder");
  ASSERT_EQ(mkfifo((s / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(open_error(s / "fifo"), "cannot read " + (s / "fifo") + ": it is a FIFO, not a file");
  if (access("/dev/zero", R_OK) == 0) {
    EXPECT_EQ(open_error("/dev/zero"),
              "cannot read /dev/zero: it is a device or socket, not a file");
  }
  std::filesystem::create_symlink("/dev/zero", s / "zero");
  EXPECT_EQ(open_error(s / "zero"),
            "cannot read " + (s / "zero") + ": it is a device or socket, not a file");
}

}  // namespace
}  // namespace powershape::util
