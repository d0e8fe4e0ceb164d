#pragma once
// Prometheus' view of a live recording, rendered once a second with the last second's shares: for
// the /metrics endpoint and for node_exporter's textfile collector.
#include <cstddef>
#include <cstdint>
#include <string>

#include "powershape/trace/trace.hpp"

namespace powershape::exporter {

inline constexpr int64_t kPublishEveryNs = 1'000'000'000;

// The text for a scrape at `now_ns` (steady clock): shares over the second before it (region
// names left out as prometheus_text says).
std::string prometheus_now(const trace::Trace& t, int64_t now_ns,
                           std::size_t* names_left_out = nullptr);

// Rewrites `path` whole with `text` (a temporary file renamed over it: the collector never reads
// half a file). Returns false, leaving no temporary file behind, when it cannot.
bool write_textfile(const std::string& path, const std::string& text);

}  // namespace powershape::exporter
