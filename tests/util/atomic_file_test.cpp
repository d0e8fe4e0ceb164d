#include "powershape/util/atomic_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "powershape/util/error.hpp"

namespace powershape::util {
namespace {

std::filesystem::path scratch() {
  auto d = std::filesystem::temp_directory_path() / ("atomic-" + std::to_string(getpid()));
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace

TEST(AtomicFile, AFileIsReplacedWholeAndKeepsItsMode) {
  const auto d = scratch();
  const auto p = d / "out.json";
  { std::ofstream(p) << "old"; }
  chmod(p.c_str(), 0640);
  write_file_atomic(p.string(), "new", 0644);
  std::stringstream got;
  got << std::ifstream(p).rdbuf();
  EXPECT_EQ(got.str(), "new");
  struct stat st {};
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  std::filesystem::remove_all(d);
}

// A FIFO (as a device: -o /dev/null) is written into; renaming over it would replace the node,
// which root may do (/dev/full became a file).
TEST(AtomicFile, AFifoIsWrittenIntoNotReplaced) {
  const auto d = scratch();
  const auto p = d / "pipe";
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  const int reader = open(p.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_file_atomic(p.string(), "through", 0644);
  char buf[16] = {};
  EXPECT_EQ(read(reader, buf, sizeof buf), 7);
  EXPECT_STREQ(buf, "through");
  close(reader);
  struct stat st {};
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(d), {}), 1);  // no temporary left
  std::filesystem::remove_all(d);
}

TEST(AtomicFile, ADeviceThatIsFullSaysSo) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  try {
    write_file_atomic("/dev/full", "x", 0644);
    FAIL() << "a full device took the write";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write /dev/full"), std::string::npos) << e.what();
  }
  struct stat st {};
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

}  // namespace powershape::util
