#pragma once
// Files a user names to read (traces, plans, profiles, specs, logs): a regular file only, so that
// no reader runs without end (/dev/zero), blocks forever (a FIFO without a writer) or reads a
// folder. Checked on the descriptor, then opened again through it: nothing swapped in between is
// read.
#include <fstream>
#include <string>

namespace powershape::util {

// Opens `in` on the file; throws invalid_input "cannot read PATH: WHY" for one that is missing or
// unreadable, a folder, a device, a FIFO or a socket.
void open_input(const std::string& path, std::ifstream& in);

}  // namespace powershape::util
