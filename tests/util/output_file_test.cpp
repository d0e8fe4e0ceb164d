#include "powershape/util/output_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "error_of.hpp"
#include "powershape/util/error.hpp"

namespace powershape::util {
namespace {

struct Scratch {
  std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("output-file-" + std::to_string(getpid()));
  Scratch() { std::filesystem::create_directories(d); }
  ~Scratch() { std::filesystem::remove_all(d); }
  std::string operator/(const std::string& name) const { return (d / name).string(); }
};

std::string open_error(const std::string& path) {
  return testing::error_of([&] { close(open_output(path, true)); });
}

TEST(OutputFile, ARegularFileIsCreatedOrEmptied) {
  Scratch s;
  EXPECT_EQ(check_output(s / "new"), OutputKind::kAbsent);
  int fd = open_output(s / "new", true);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "abc", 3), 3);
  close(fd);
  EXPECT_EQ(check_output(s / "new"), OutputKind::kRegular);
  fd = open_output(s / "new", true);
  close(fd);
  EXPECT_EQ(std::filesystem::file_size(s / "new"), 0u);
  fd = open_output(s / "new", false);
  close(fd);
  EXPECT_EQ(check_output("/dev/null"), OutputKind::kNull);
  close(open_output("/dev/null", true));
}

// A descriptor of the process's own (/dev/stdout, a shell's >(...) as /dev/fd/N) is written
// through a copy of it; one it does not have is refused.
TEST(OutputFile, OwnDescriptorsAreWrittenThroughACopy) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string path = "/dev/fd/" + std::to_string(fds[1]);
  EXPECT_EQ(check_output(path), OutputKind::kOwnDescriptor);
  const int fd = open_output(path, true);
  ASSERT_GE(fd, 0);
  EXPECT_NE(fd, fds[1]);
  ASSERT_EQ(write(fd, "x", 1), 1);
  char c = 0;
  ASSERT_EQ(read(fds[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  close(fd);
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(check_output("/dev/stdout"), OutputKind::kOwnDescriptor);
  EXPECT_EQ(open_error("/dev/fd/987654"),
            "cannot write /dev/fd/987654: this process has no such open descriptor");
}

// Nothing but a regular file or /dev/null: a link planted at the path is never followed (its
// target keeps its content), a FIFO is refused at once rather than waited on, a device or a
// folder is refused.
TEST(OutputFile, LinksFifosDevicesAndFoldersAreRefused) {
  Scratch s;
  { std::ofstream(s / "target") << "kept"; }
  std::filesystem::create_symlink(s / "target", s / "link");
  EXPECT_EQ(open_error(s / "link"), "cannot write " + (s / "link") +
                                        ": it is a symbolic link (name the file it points to)");
  EXPECT_EQ(std::filesystem::file_size(s / "target"), 4u);
  EXPECT_THROW(check_output(s / "link"), Error);
  ASSERT_EQ(mkfifo((s / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(open_error(s / "fifo"),
            "cannot write " + (s / "fifo") + ": it is a FIFO (use - for standard output)");
  EXPECT_EQ(testing::error_of([&] { check_output(s / "fifo"); }),
            "cannot write " + (s / "fifo") + ": it is a FIFO (use - for standard output)");
  if (access("/dev/zero", F_OK) == 0) {
    EXPECT_EQ(open_error("/dev/zero"),
              "cannot write /dev/zero: it is a device or socket, not a file");
  }
  EXPECT_EQ(open_error(s.d.string()), "cannot write " + s.d.string() + ": it is a folder");
  EXPECT_EQ(testing::error_of([&] { check_output(s.d.string()); }),
            "cannot write " + s.d.string() + ": it is a folder");
}

// A second name of another user's file, planted where a shared folder lets anyone make one
// (fs.protected_hardlinks off), is not emptied. Needs root, to give the file away.
TEST(OutputFile, AHardLinkToAnotherUsersFileIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a file another user owns";
  Scratch s;
  { std::ofstream(s / "theirs") << "kept"; }
  ASSERT_EQ(chown((s / "theirs").c_str(), 65534, 65534), 0);
  std::filesystem::create_hard_link(s / "theirs", s / "planted");
  EXPECT_EQ(open_error(s / "planted"),
            "cannot write " + (s / "planted") + ": it is a hard link to a file of uid 65534");
  EXPECT_EQ(std::filesystem::file_size(s / "theirs"), 4u);
}

}  // namespace
}  // namespace powershape::util
