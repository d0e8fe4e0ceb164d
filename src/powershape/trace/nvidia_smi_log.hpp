#pragma once
// The logs GPU users already have, read as traces: `nvidia-smi --query-gpu=timestamp,index,
// power.draw,clocks.sm,... --format=csv[,nounits] -lms N` and `nvidia-smi dmon [-o T|DT]`, so
// `report` and `advise --trace` take them as they take powershape's own CSV.
#include <istream>
#include <optional>
#include <string>

#include "powershape/trace/trace.hpp"

namespace powershape::trace {

enum class NvidiaSmiLog { kNone, kQuery, kDmon };

// Which kind of log a file's first line begins (kNone: not nvidia-smi's).
NvidiaSmiLog nvidia_smi_log_kind(const std::string& first_line);

// Reads a whole log of that kind. Power, clocks, temperatures, utilisation and the clock-event
// reasons become the signals powershape records (power.draw is NVML's power usage, dmon's pwr
// too); a value nvidia-smi could not read ([N/A], -) is a reading not taken. A query log needs
// its timestamp column; a dmon log without -o T is taken as one row a GPU a second (its default
// delay), which an event says. Throws naming the file, line and column of what is malformed.
Trace read_nvidia_smi_log(std::istream& in, const std::string& name, NvidiaSmiLog kind);

}  // namespace powershape::trace
