// libFuzzer target: the trace readers must accept a file or reject it with std::runtime_error,
// never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/json_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    std::istringstream in(text);
    powershape::trace::read_csv(in, "fuzz.csv");
  } catch (const std::runtime_error&) {
  }
  try {
    auto j = nlohmann::json::parse(text);
    powershape::trace::json_file_from(j, "fuzz.json");
  } catch (const std::runtime_error&) {
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
