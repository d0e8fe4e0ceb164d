#pragma once
// Files written whole or not at all: the text goes to a temporary file beside the target, which is
// then renamed over it. A reader (a scrape, a dashboard, the next run) never sees half a file, and
// a process killed while writing leaves the old file, not an empty one. A failure removes the
// temporary file and throws naming the path.
#include <string>
#include <string_view>

namespace powershape::util {

// "-" is standard output (util/stdout_data.hpp); the path is held to output_file.hpp's rule
// (/dev/null written into; a link, device, FIFO or folder refused). mode: the permissions of a
// file this creates (an existing file of the caller's keeps its own).
void write_file_atomic(const std::string& path, std::string_view text, unsigned mode = 0644);

}  // namespace powershape::util
