#include "powershape/telemetry/control_fifo.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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

}  // namespace powershape::telemetry
