#include "powershape/util/output_lock.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "powershape/util/error.hpp"

namespace powershape::util {
namespace {
namespace fs = std::filesystem;

class OutputLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("powershape_lock_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// A live output is created and held: a second claim on it is refused (another monitor), and a
// file nothing was written into is gone again when the claim ends.
TEST_F(OutputLockTest, ALiveFileIsHeldAndAnUnusedOneRemoved) {
  const std::string csv = at("rec.csv");
  {
    OutputLock held(csv, "-o", OutputLock::Written::kLive);
    EXPECT_TRUE(fs::exists(csv));
    try {
      OutputLock again(csv, "-o", OutputLock::Written::kLive);
      ADD_FAILURE() << "a held file was claimed twice";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("-o: cannot write " + csv), std::string::npos);
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    }
  }
  EXPECT_FALSE(fs::exists(csv));
}

// One written whole at the end is not created early; a folder, or a folder that is not there,
// is refused, naming the option the caller gave.
TEST_F(OutputLockTest, AnOutputAtTheEndIsCheckedNotCreated) {
  { OutputLock later(at("out.json"), "--json", OutputLock::Written::kAtEnd); }
  EXPECT_FALSE(fs::exists(at("out.json")));
  EXPECT_THROW(OutputLock(dir_.string(), "--json", OutputLock::Written::kAtEnd), Error);
  try {
    OutputLock(at("no/such/x.json"), "--report", OutputLock::Written::kAtEnd);
    ADD_FAILURE() << "a missing folder was taken";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--report: ", 0), 0u) << e.what();
  }
}

TEST_F(OutputLockTest, SameFileSeesLinks) {
  std::ofstream(at("a")) << "x";
  fs::create_symlink(at("a"), at("b"));
  fs::create_hard_link(at("a"), at("c"));
  EXPECT_TRUE(same_file(at("a"), at("b")));
  EXPECT_TRUE(same_file(at("a"), at("c")));
  EXPECT_FALSE(same_file(at("a"), at("missing")));
}

// A run's outputs are claimed together: none may be one of its inputs (a link to it included),
// nor a file another of its outputs names, however spelled; standard output is never either.
TEST_F(OutputLockTest, ClaimedOutputsAreNeitherInputsNorEachOther) {
  std::ofstream(at("trace.csv")) << "x";
  fs::create_symlink(at("trace.csv"), at("link.csv"));
  const auto refusal = [&](const std::vector<Output>& outs) {
    try {
      claim_outputs(outs, {at("trace.csv")});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(refusal({{at("link.csv"), "--json"}}),
            "--json: " + at("link.csv") + " is an input; it would be overwritten");
  EXPECT_EQ(refusal({{at("a.csv"), "-o"}, {(dir_ / "." / "a.csv").string(), "--json"}}),
            "-o and --json name the same file " + (dir_ / "." / "a.csv").string());
  EXPECT_EQ(refusal({{"-", "-o"}, {"-", "--json"}, {"", "--report"}}), "no error");
  EXPECT_EQ(claim_outputs({{at("a.csv"), "-o", OutputLock::Written::kLive}, {"", "--json"}}).size(),
            1u);
}

}  // namespace
}  // namespace powershape::util
