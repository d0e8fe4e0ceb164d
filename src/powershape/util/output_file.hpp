#pragma once
// Where powershape writes a file a user named (-o, --json, --textfile, a report): one rule for
// every output, since root may run any of them in a folder another user can write to.
// - "-" is standard output (stdout_data.hpp);
// - /dev/null is written into (nothing kept); so is a descriptor of this process's own named as
//   /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N (a shell's `>(gzip >x)`): a copy of it;
// - a regular file is created or replaced; a link at the path itself is never followed (a link
//   planted in a shared folder would make root write wherever it points);
// - anything else (a device, a FIFO, a socket, a folder) is refused: a device is not ours to
//   write, and a FIFO without a reader would block the run forever.
#include <string>

namespace powershape::util {

enum class OutputKind { kNull, kOwnDescriptor, kRegular, kAbsent };

// What the path is, without following a link there; throws invalid_input "cannot write PATH:
// WHY" for a link, a device, a FIFO, a socket or a folder. Not for "-".
OutputKind check_output(const std::string& path);

// Opens the path for writing under the rule above (created 0644 where absent; `truncate`: an
// existing regular file is emptied), checked on the descriptor it returns, so that nothing
// swapped in between is written; an own descriptor's path gives a copy of that descriptor.
// Throws invalid_input as check_output does.
int open_output(const std::string& path, bool truncate);

}  // namespace powershape::util
