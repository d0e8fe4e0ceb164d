#include "powershape/util/share_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace powershape::util {

std::string share_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("POWERSHAPE_SHARE"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "powershape";
    if (fs::is_directory(installed / "profiles", ec)) return installed.string();
  }
  if (fs::is_directory(fs::path(POWERSHAPE_SOURCE_DIR) / "profiles", ec))
    return POWERSHAPE_SOURCE_DIR;
  return POWERSHAPE_INSTALL_SHARE;
}

const char* version() { return POWERSHAPE_VERSION; }

}  // namespace powershape::util
