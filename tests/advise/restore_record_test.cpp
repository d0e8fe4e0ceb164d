// Restore records as an attacker would plant them: none is acted on unless it is the effective
// user's own file in the user's own folder.
#include "powershape/advise/restore_record.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "error_of.hpp"

namespace powershape::advise {
namespace {
namespace fs = std::filesystem;

class RecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("powershape_record_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    state_ = (dir_ / "state").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  static mode_t mode_of(const fs::path& p) {
    struct stat st {};
    lstat(p.c_str(), &st);
    return st.st_mode & 07777;
  }
  std::string record(const std::string& name, const std::string& text, mode_t mode = 0600) {
    const std::string p = (fs::path(state_) / name).string();
    std::ofstream(p) << text;
    chmod(p.c_str(), mode);
    return p;
  }
  fs::path dir_;
  std::string state_;
};

constexpr const char* kGood = R"({"target": {"kind": "nvml", "gpu": 0}, "power_limit_mw": 700000})";

// Under umask 000 the folder is still 0700 and a record 0600.
TEST_F(RecordTest, FolderAndRecordsArePrivateWhateverTheUmask) {
  const mode_t old = umask(0);
  prepare_state_dir(state_);
  EXPECT_TRUE(create_record(state_ + "/restore-a.json", nlohmann::json::parse(kGood)));
  umask(old);
  EXPECT_EQ(mode_of(state_), 0700u);
  EXPECT_EQ(mode_of(state_ + "/restore-a.json"), 0600u);
  EXPECT_FALSE(create_record(state_ + "/restore-a.json", {{"x", 1}}));  // exclusive: the hold
  EXPECT_EQ(read_record(state_ + "/restore-a.json").at("power_limit_mw"), 700000);
}

// Its missing parents are 0755 under umask 000 too (they were 0777: another user could move the
// records away); a parent anyone can write that is not sticky is refused, a sticky one (/tmp) or
// a group-writable one (Debian's user-private groups) is not.
TEST_F(RecordTest, ItsParentsAreNotOthersToWrite) {
  const mode_t old = umask(0);
  const std::string deep = (dir_ / "home" / ".local" / "state" / "powershape").string();
  prepare_state_dir(deep);
  umask(old);
  EXPECT_EQ(mode_of(dir_ / "home"), 0755u);
  EXPECT_EQ(mode_of(dir_ / "home" / ".local" / "state"), 0755u);
  EXPECT_EQ(mode_of(deep), 0700u);
  chmod((dir_ / "home" / ".local" / "state").c_str(), 0777);
  EXPECT_NE(testing::error_of([&] { prepare_state_dir(deep); }).find("parent"), std::string::npos);
  chmod((dir_ / "home" / ".local" / "state").c_str(), 01777);
  prepare_state_dir(deep);
  chmod((dir_ / "home" / ".local" / "state").c_str(), 0775);  // a user-private group's
  prepare_state_dir(deep);
}

// A folder others can write, or a symbolic link standing for it, is refused outright.
TEST_F(RecordTest, AnOpenFolderIsRefused) {
  fs::create_directories(state_);
  chmod(state_.c_str(), 0777);
  EXPECT_NE(testing::error_of([&] { prepare_state_dir(state_); }).find("writable by others"),
            std::string::npos);
  chmod(state_.c_str(), 0700);
  const std::string link = (dir_ / "link").string();
  fs::create_directory_symlink(state_, link);
  EXPECT_NE(testing::error_of([&] { prepare_state_dir(link); }).find("symbolic link"),
            std::string::npos);
}

// Planted records: writable by others, a symbolic link, a hard link, another user's, not JSON,
// too large: each refused, naming the record and why.
TEST_F(RecordTest, PlantedRecordsAreRefused) {
  prepare_state_dir(state_);
  const auto why = [](const std::string& p) { return testing::error_of([&] { read_record(p); }); };
  EXPECT_NE(why(record("restore-w.json", kGood, 0666)).find("writable by others"),
            std::string::npos);
  const std::string good = record("restore-good.json", kGood);
  EXPECT_EQ(why(good), "no error");
  fs::create_symlink(good, state_ + "/restore-sym.json");
  EXPECT_NE(why(state_ + "/restore-sym.json").find("symbolic link"), std::string::npos);
  fs::create_hard_link(good, state_ + "/restore-hard.json");
  EXPECT_NE(why(state_ + "/restore-hard.json").find("links"), std::string::npos);
  fs::remove(state_ + "/restore-hard.json");
  EXPECT_NE(why(record("restore-bad.json", "{\"target\": ")).find("not JSON"), std::string::npos);
  EXPECT_NE(why(record("restore-arr.json", "[1]")).find("not a restore record"), std::string::npos);
  EXPECT_NE(why(record("restore-big.json", std::string(100000, ' ') + kGood)).find("larger"),
            std::string::npos);
  if (geteuid() == 0) {  // another user's record: only root can make one here
    const std::string theirs = record("restore-theirs.json", kGood);
    ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
    EXPECT_NE(why(theirs).find("belongs to uid 65534"), std::string::npos);
  }
}

// The holder is a pid and its start time: a live process that reuses the pid is not the holder.
TEST_F(RecordTest, ARecycledPidIsNotTheHolder) {
  const Holder me = this_process();
  EXPECT_TRUE(still_running(me));
  EXPECT_FALSE(still_running({me.pid, me.start_ticks + 1}));  // same pid, another start
  EXPECT_FALSE(still_running({me.pid, 0}));                   // a record without a start time
  const pid_t child = fork();
  if (child == 0) std::_Exit(0);
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(still_running({static_cast<long>(child), me.start_ticks}));
  const auto h = holder_of({{"holder", to_json(me)}});
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->pid, me.pid);
  EXPECT_EQ(h->start_ticks, me.start_ticks);
  EXPECT_FALSE(holder_of({{"pid", 5}}).has_value());
}

}  // namespace
}  // namespace powershape::advise
