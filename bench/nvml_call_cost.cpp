// What each NVML call powershape makes costs on this machine: median and 90th percentile of
// 200 calls each, and the total for one poll of every signal against the 1 ms period budget.
//   nvml_call_cost [--library PATH]
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "powershape/telemetry/clock.hpp"
#include "powershape/telemetry/nvml_api.hpp"

using namespace powershape::telemetry;

int main(int argc, char** argv) {
  std::string lib = argc > 2 && std::string(argv[1]) == "--library" ? argv[2] : "libnvidia-ml.so.1";
  try {
    nvml::Library l(lib);
    const nvml::Api& api = l.api();
    nvml::Device d = nullptr;
    if (api.DeviceGetHandleByIndex(0, &d) != nvml::kSuccess) throw std::runtime_error("no GPU 0");
    unsigned u = 0;
    unsigned long long ull = 0;
    nvml::Utilization util{};
    auto field = [&](unsigned id, unsigned scope) {
      return [&api, d, id, scope] {
        nvml::FieldValue v{};
        v.fieldId = id;
        v.scopeId = scope;
        api.DeviceGetFieldValues(d, 1, &v);
        return v.nvmlReturn;
      };
    };
    std::vector<std::pair<std::string, std::function<nvml::Return()>>> calls = {
        {"GetPowerUsage", [&] { return api.DeviceGetPowerUsage(d, &u); }},
        {"GetClockInfo(SM)", [&] { return api.DeviceGetClockInfo(d, nvml::kClockSm, &u); }},
        {"GetClockInfo(MEM)", [&] { return api.DeviceGetClockInfo(d, nvml::kClockMem, &u); }},
        {"GetTemperature", [&] { return api.DeviceGetTemperature(d, 0, &u); }},
        {"GetCurrentClocksEventReasons",
         [&] { return api.DeviceGetCurrentClocksEventReasons(d, &ull); }},
        {"GetTotalEnergyConsumption", [&] { return api.DeviceGetTotalEnergyConsumption(d, &ull); }},
        {"GetUtilizationRates", [&] { return api.DeviceGetUtilizationRates(d, &util); }},
        {"field POWER_INSTANT", field(nvml::kFiPowerInstant, 0)},
        {"field POWER_AVERAGE", field(nvml::kFiPowerAverage, 0)},
        {"field POWER_AVERAGE(mem)", field(nvml::kFiPowerAverage, nvml::kPowerScopeMemory)},
        {"field MEMORY_TEMP", field(nvml::kFiMemoryTemp, 0)},
        {"field ENERGY (191)", field(nvml::kFiEnergy, 0)},
        {"field TOTAL_ENERGY (83)", field(83, 0)},
        {"field THROTTLE_SW_POWER", field(nvml::kFiThrottleSwPower, 0)},
        {"field THROTTLE_SW_THERMAL", field(nvml::kFiThrottleSwThermal, 0)},
        {"field THROTTLE_HW_THERMAL", field(nvml::kFiThrottleHwThermal, 0)},
        {"field THROTTLE_HW_POWER_BRAKE", field(nvml::kFiThrottleHwPowerBrake, 0)},
        // The ids this bench read the three throttle counters with before 2026-12-05: power
        // smoothing's active profile and two administrator overrides.
        {"field 269 (old SW thermal id)", field(269, 0)},
        {"field 270 (old HW thermal id)", field(270, 0)},
        {"field 271 (old power brake id)", field(271, 0)},
        {"field PWR_SMOOTHING_ENABLED", field(nvml::kFiSmoothingEnabled, 0)},
        {"field PWR_SMOOTHING_FLOOR", field(nvml::kFiSmoothingAppliedFloor, 0)},
        {"GetSamples(count)",
         [&] {
           nvml::ValueType t{};
           unsigned n = 0;
           return api.DeviceGetSamples(d, nvml::kTotalPowerSamples, 0, &t, &n, nullptr);
         }},
        {"GetSamples(count+fetch)",
         [&] {
           nvml::ValueType t{};
           unsigned n = 0;
           nvml::Return r = api.DeviceGetSamples(d, nvml::kTotalPowerSamples, 0, &t, &n, nullptr);
           if (r != nvml::kSuccess) return r;
           std::vector<nvml::SampleValue> buf(n);
           return api.DeviceGetSamples(d, nvml::kTotalPowerSamples, 0, &t, &n, buf.data());
         }},
    };
    std::printf("%-30s %10s %10s %s\n", "call", "p50 us", "p90 us", "return");
    for (auto& [name, fn] : calls) {
      std::vector<double> us;
      nvml::Return r = 0;
      for (int i = 0; i < 200; ++i) {
        int64_t t = steady_now_ns();
        r = fn();
        us.push_back(static_cast<double>(steady_now_ns() - t) * 1e-3);
      }
      std::sort(us.begin(), us.end());
      std::printf("%-30s %10.1f %10.1f %d\n", name.c_str(), us[100], us[180], r);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvml_call_cost: %s\n", e.what());
    return 1;
  }
  return 0;
}
