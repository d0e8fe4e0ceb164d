// Every file of the fuzz corpus is either read or rejected with one clear line naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/json_file.hpp"

namespace powershape::trace {

TEST(Corpus, EveryFileIsReadOrRejectedByName) {
  int read = 0, rejected = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(POWERSHAPE_TEST_DIR "/fuzz/corpus/trace")) {
    std::string path = e.path().string();
    try {
      if (e.path().extension() == ".json") {
        read_json(path);
      } else {
        read_csv(path);
      }
      ++read;
    } catch (const std::runtime_error& err) {
      std::string what = err.what();
      EXPECT_EQ(what.rfind(path + ":", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      ++rejected;
    }
  }
  EXPECT_GE(read, 3);
  EXPECT_GE(rejected, 6);
}

}  // namespace powershape::trace
