#pragma once
// Files written whole or not at all: the text goes to a temporary file beside the target, which is
// then renamed over it. A reader (a scrape, a dashboard, the next run) never sees half a file, and
// a process killed while writing leaves the old file, not an empty one. A failure removes the
// temporary file and throws naming the path.
#include <string>
#include <string_view>

namespace powershape::util {

// "-" is standard output (util/stdout_data.hpp). mode: the permissions of a file this creates (an
// existing file's are kept).
void write_file_atomic(const std::string& path, std::string_view text, unsigned mode = 0644);

}  // namespace powershape::util
