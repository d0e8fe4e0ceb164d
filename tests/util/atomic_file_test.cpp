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

// A FIFO is refused at once (a textfile on a FIFO without a reader blocked forever) and not
// replaced; /dev/full is refused as a device, and stays one (it once became a file).
TEST(AtomicFile, AFifoOrADeviceIsRefusedNotReplaced) {
  const auto d = scratch();
  const auto p = d / "pipe";
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  EXPECT_THROW(write_file_atomic(p.string(), "through", 0644), Error);
  struct stat st {};
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(d), {}), 1);  // no temporary left
  std::filesystem::remove_all(d);
  if (access("/dev/full", F_OK) != 0) return;
  try {
    write_file_atomic("/dev/full", "x", 0644);
    FAIL() << "a device took the write";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write /dev/full: it is a device or socket, not a file");
  }
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(AtomicFile, DevNullTakesTheWrite) { write_file_atomic("/dev/null", "gone", 0644); }

// A file another user left there (0666, so that anyone may rewrite what a scraper reads) does not
// lend the new file its mode; a link at the path is refused, its target untouched.
TEST(AtomicFile, APlantedFileOrLinkLendsNothing) {
  const auto d = scratch();
  const auto target = d / "target", link = d / "link";
  { std::ofstream(target) << "kept"; }
  std::filesystem::create_symlink(target, link);
  EXPECT_THROW(write_file_atomic(link.string(), "new", 0644), Error);
  std::stringstream got;
  got << std::ifstream(target).rdbuf();
  EXPECT_EQ(got.str(), "kept");
  if (geteuid() == 0) {
    const auto planted = d / "planted";
    { std::ofstream(planted) << "old"; }
    ASSERT_EQ(chown(planted.c_str(), 65534, 65534), 0);
    ASSERT_EQ(chmod(planted.c_str(), 0666), 0);
    write_file_atomic(planted.string(), "new", 0644);
    struct stat st {};
    ASSERT_EQ(stat(planted.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    EXPECT_EQ(st.st_uid, 0u);
  }
  std::filesystem::remove_all(d);
}

}  // namespace powershape::util
