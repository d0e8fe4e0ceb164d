#include "powershape/trace/json_file.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace powershape::trace {

TEST(JsonFile, RoundTripsMetadataAndSummary) {
  JsonFile f;
  f.meta.source = "fake:x.csv";
  DeviceInfo d;
  d.name = "GPU";
  d.max_sm_clock_mhz = telemetry::Reading::of(1980);
  f.meta.devices.push_back(d);
  f.meta.regions.push_back({"warmup", 0, 1, 2});
  f.meta.events.push_back({5, -1, "something"});
  f.summary = {{"energy_j", 1.5}};
  f.cpu_energy = {{"package-0", 12.5}};
  f.per_token = {{"tokens", 4096}};
  f.by_process = {{{"gpu", 0}, {"pid", 11}, {"joules", 3.5}}};
  std::string path = ::testing::TempDir() + "/summary.json";
  write_json(path, f);
  EXPECT_EQ(read_json(path), f);
}

TEST(JsonFile, RejectsWhatIsNotASummary) {
  std::string path = ::testing::TempDir() + "/bad.json";
  std::ofstream(path) << "{\"format\": \"powershape summary v1\", \"source\": 3}";
  try {
    read_json(path);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
  }
  std::ofstream(path) << "{\n  \"format\": oops}";
  try {
    read_json(path);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("at line 2, column"), std::string::npos) << e.what();
  }
}

}  // namespace powershape::trace
