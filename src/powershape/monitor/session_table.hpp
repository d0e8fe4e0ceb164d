#pragma once
// What a recording session says of its sampler when it ends: rounds, late ones, rows dropped and
// its share of a core, then each GPU's update periods (a run of GPUs alike on one line).
#include <cstdio>

#include "powershape/monitor/session.hpp"

namespace powershape::monitor {

void print_sampler(std::FILE* out, const Session& session);

}  // namespace powershape::monitor
