// libFuzzer target: simulator profiles (JSON), their power modes, and a short run of what they
// accept (a profile that passes the checks must simulate to a finite result or say why not).
#include "fuzz_input.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/sim/simulator.hpp"
#include "powershape/workload/builders.hpp"

using namespace powershape;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = fuzz::json_of(fuzz::text_of(data, size));
  if (!j) return 0;
  fuzz::expect_clean([&] {
    sim::Profile p = sim::profile_from_json(*j);
    const sim::Profile base = p;
    for (const auto& m : base.power_modes) {
      p = base;
      sim::apply_power_mode(p, m.name);
    }
    sim::SimOptions o;
    o.seconds = 0.02;
    o.lead_in_s = 0;
    o.tail_s = 0;
    sim::simulate(p, workload::square_plan({5, 0.5, workload::Gap::kIdle}, {1e14, 1e12}), o);
  });
  return 0;
}
