#include "powershape/exporter/textfile.hpp"

#include <stdexcept>

#include "powershape/exporter/prometheus.hpp"
#include "powershape/util/atomic_file.hpp"

namespace powershape::exporter {

std::string prometheus_now(const trace::Trace& t, int64_t now_ns, std::size_t* names_left_out) {
  return prometheus_text(t, now_ns - kPublishEveryNs, now_ns, names_left_out);
}

bool write_textfile(const std::string& path, const std::string& text) {
  try {
    util::write_file_atomic(path, text);
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

}  // namespace powershape::exporter
