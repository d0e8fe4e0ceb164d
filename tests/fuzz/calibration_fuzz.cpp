// libFuzzer target: a calibration folder (`sim calibrate --data`). The input holds its four files
// separated by lines of "=====": square_wave_idle_summary.json, sustained_60s_summary.json,
// gemm_sustained_trace.csv, sustained_60s_trace.csv.
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "fuzz_input.hpp"
#include "powershape/sim/calibrate.hpp"

using namespace powershape;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() /
             ("powershape-calibration-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  static const std::array<const char*, 4> kFiles = {
      "square_wave_idle_summary.json", "sustained_60s_summary.json", "gemm_sustained_trace.csv",
      "sustained_60s_trace.csv"};
  const std::string text = fuzz::text_of(data, size);
  std::size_t at = 0;
  for (const char* name : kFiles) {
    std::size_t end = text.find("\n=====\n", at);
    std::ofstream(dir + "/" + name, std::ios::trunc)
        << text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? text.size() : end + 7;
  }
  fuzz::expect_clean([&] { sim::read_calibration_data(dir); });
  return 0;
}
