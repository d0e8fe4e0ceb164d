#pragma once
// The one place a workload's plan is derived from its description (workload.hpp): its steps'
// phases in order (steps.hpp).
#include <cstdint>

#include "powershape/workload/plan.hpp"

namespace powershape::workload {

// Each throws std::invalid_argument naming what is wrong (a non-positive size, more chunks than
// rows, a duty outside (0, 1)).
//
// Each is derived from the workload's steps (steps.hpp), a phase a kernel, save a square wave's
// products: one burst phase.
Plan lmhead_plan(const LmHead& w, int chunks);
Plan msm_plan(const Msm& w, int chunks);
Plan products_plan(const Products& w);
Plan square_plan(const Square& w, const Rates& r);
// Any kind; Custom has no phases to derive and throws.
Plan make_plan(const Workload& w, const Rates& r);

}  // namespace powershape::workload
