#pragma once
// The table and JSON of advise's outcomes, predicted or measured (advise, advise --sweep).
#include <cstddef>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "powershape/advise/setting.hpp"

namespace powershape::advise {

// The rows in the order shown: the recommendation, the GPU as found, then the other settings
// sorted (power modes, power limits, clock caps; each from the highest down).
std::vector<std::size_t> table_order(const std::vector<advise::Outcome>& o, std::size_t chosen);
// Each outcome's time (ms x ms_scale, headed `unit`), energy, ratios and power; the chosen marked;
// a run of settings that each leave the job as found (a limit never reached) on one line. Not
// `every`: the recommendation and the GPU as found alone; returns how many more there are.
std::size_t print_outcomes(std::FILE* out, const std::vector<advise::Outcome>& o,
                           std::size_t chosen, const char* unit, double ms_scale,
                           bool every = true);
nlohmann::json to_json(const advise::Outcome& x);

}  // namespace powershape::advise
