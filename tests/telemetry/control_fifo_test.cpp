#include "powershape/telemetry/control_fifo.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace powershape::telemetry {

// Marks sent to the FIFO arrive as whole lines; a partial line waits for its end; the FIFO's
// folder goes with it.
TEST(ControlFifo, MarksArriveAsWholeLines) {
  std::string path;
  {
    ControlFifo fifo;
    path = fifo.path();
    ASSERT_TRUE(std::filesystem::exists(path));
    send_mark(path, {true, 10, "step"});
    send_mark(path, {false, 20, "step"});
    const std::string got = fifo.read_available();
    EXPECT_EQ(got, format_mark({true, 10, "step"}) + format_mark({false, 20, "step"}));
    const auto m = parse_mark(got.substr(0, got.find('\n')));
    ASSERT_TRUE(m.has_value());
    EXPECT_TRUE(m->begin);
    EXPECT_EQ(m->t_ns, 10);
    EXPECT_EQ(m->name, "step");
    EXPECT_EQ(fifo.read_available(), "");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

// A mark goes only to a FIFO: a regular file named in its place, or a link to one, is left as
// it was (a recorder running as root passes marks on to the path its environment names).
TEST(ControlFifo, AMarkIsNeverWrittenToAFileOrThroughALink) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ps_mark_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "precious";
  { std::ofstream(file) << "kept\n"; }
  EXPECT_THROW(send_mark(file.string(), {true, 1, "step"}), std::runtime_error);
  ControlFifo fifo;
  std::filesystem::create_symlink(fifo.path(), dir / "link");
  EXPECT_THROW(send_mark((dir / "link").string(), {true, 1, "step"}), std::runtime_error);
  EXPECT_EQ(fifo.read_available(), "");
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "kept");
  std::filesystem::remove_all(dir);
}

// A FIFO another user planted where a recorder's was is not written: the marks' region names are
// not theirs to read. Needs root, to give the FIFO away.
TEST(ControlFifo, AMarkIsNeverWrittenToAnotherUsersFifo) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a FIFO another user owns";
  ControlFifo fifo;
  ASSERT_EQ(chown(fifo.path().c_str(), 65534, 65534), 0);
  try {
    send_mark(fifo.path(), {true, 1, "step"});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("belongs to uid 65534, not to you"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fifo.read_available(), "");
}

// A writer faster than the reader: each call returns at most kMaxRead bytes of lines, so the
// caller gets back to its deadline; nothing is lost, the rest comes with the next calls.
TEST(ControlFifo, ReadsAtMostItsCapACall) {
  ControlFifo fifo;
  const std::string line = format_mark({true, 1, "s"});
  const std::size_t lines = 3 * ControlFifo::kMaxRead / line.size();
  std::thread writer([&] {
    const int fd = open(fifo.path().c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    std::string all;
    for (std::size_t i = 0; i < lines; ++i) all += line;
    for (std::size_t at = 0; at < all.size();) {
      const ssize_t n = write(fd, all.data() + at, all.size() - at);
      ASSERT_GT(n, 0);
      at += static_cast<std::size_t>(n);
    }
    close(fd);
  });
  std::size_t got = 0, calls = 0;
  while (got < lines * line.size() && calls < 100000) {
    const std::string part = fifo.read_available();
    EXPECT_LE(part.size(), ControlFifo::kMaxRead + ControlFifo::kMaxLine);
    got += part.size();
    ++calls;
  }
  writer.join();
  EXPECT_EQ(got, lines * line.size());
  EXPECT_GE(calls, 3u);
}

// A line that never ends is no mark: past kMaxLine bytes it is dropped, not held forever.
TEST(ControlFifo, DropsALineThatNeverEnds) {
  ControlFifo fifo;
  const int fd = open(fifo.path().c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  const std::string junk(ControlFifo::kMaxLine + 10, 'x');
  ASSERT_EQ(write(fd, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  EXPECT_EQ(fifo.read_available(), "");
  const std::string mark = format_mark({false, 5, "step"});
  ASSERT_EQ(write(fd, ("\n" + mark).data(), mark.size() + 1),
            static_cast<ssize_t>(mark.size() + 1));
  close(fd);
  EXPECT_EQ(fifo.read_available(), "\n" + mark);  // the junk's end, then the mark, whole
}

}  // namespace powershape::telemetry
