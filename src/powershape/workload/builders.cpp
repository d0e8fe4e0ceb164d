#include "powershape/workload/builders.hpp"

#include <stdexcept>
#include <string>

#include "powershape/util/error.hpp"
#include "powershape/workload/steps.hpp"

namespace powershape::workload {
namespace {

Plan start(const Workload& w) {
  Plan plan;
  plan.name = name_of(w);
  plan.workload = w;
  return plan;
}

}  // namespace

// A phase a step (steps.hpp), so that the simulator runs what the GPU runs: the LM head op's
// steps its own, a square wave's products one burst.
Plan make_plan(const Workload& w, const Rates& r) {
  Plan plan = start(w);
  std::visit(
      [&](const auto& k) {
        if constexpr (std::is_same_v<std::decay_t<decltype(k)>, Custom>) {
          throw invalid_input(
              "a custom workload has no phases to derive: read its plan from its file");
        } else {
          k.check(w.chunks);
        }
      },
      w.kind);
  workload_steps(w, r, [&](const WorkloadStep& s) {
    for (const auto& ph : s.phases) {
      if (s.joins && !plan.phases.empty() && plan.phases.back().name == ph.name) {
        plan.phases.back().flops += ph.flops;
        plan.phases.back().bytes += ph.bytes;
      } else {
        plan.phases.push_back(ph);
      }
    }
  });
  return plan;
}

Plan lmhead_plan(const LmHead& w, int chunks) { return make_plan({w, chunks}, {}); }
Plan msm_plan(const Msm& w, int chunks) { return make_plan({w, chunks}, {}); }
Plan products_plan(const Products& w) { return make_plan({w}, {}); }
Plan square_plan(const Square& w, const Rates& r) { return make_plan({w}, r); }

}  // namespace powershape::workload
