#include "powershape/trace/recording_name.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "powershape/util/share_dir.hpp"

namespace powershape::trace {
namespace fs = std::filesystem;

std::string recording_path(const std::string& name) {
  std::error_code ec;
  if (name.empty() || fs::exists(name, ec) || name.front() == '/') return name;
  const fs::path data = fs::path(util::share_dir()) / "data";
  for (const char* tail : {"", ".csv", "_trace.csv"}) {
    const fs::path p = data / (name + tail);
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return name;
}

std::string recording_names() {
  std::vector<std::string> names;
  std::error_code ec;
  const fs::path data = fs::path(util::share_dir()) / "data";
  for (const auto& gpu : fs::directory_iterator(data, ec)) {
    std::error_code inner;
    for (const auto& f : fs::directory_iterator(gpu.path(), inner)) {
      const std::string file = f.path().filename().string();
      const std::string tail = "_trace.csv";
      if (file.size() > tail.size() && file.ends_with(tail))
        names.push_back(gpu.path().filename().string() + "/" +
                        file.substr(0, file.size() - tail.size()));
    }
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace powershape::trace
