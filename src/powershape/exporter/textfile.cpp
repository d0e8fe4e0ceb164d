#include "powershape/exporter/textfile.hpp"

#include <cstdio>
#include <fstream>

#include "powershape/exporter/prometheus.hpp"

namespace powershape::exporter {

std::string prometheus_now(const trace::Trace& t, int64_t now_ns) {
  return prometheus_text(t, now_ns - kPublishEveryNs, now_ns);
}

bool write_textfile(const std::string& path, const trace::Trace& t, int64_t now_ns) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << prometheus_now(t, now_ns);
    out.close();
    if (out && std::rename(tmp.c_str(), path.c_str()) == 0) return true;
  }
  std::remove(tmp.c_str());
  return false;
}

}  // namespace powershape::exporter
