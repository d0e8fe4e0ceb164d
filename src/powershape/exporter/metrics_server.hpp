#pragma once
// A minimal HTTP server for Prometheus scrapes: GET /metrics answers the latest text it was given
// (text/plain; version=0.0.4), anything else 404 or 400, one connection at a time, HTTP/1.0 and
// Connection: close. Its own thread, never the sampler's: a slow or malformed client costs only
// this thread, and one that sends nothing is dropped after `client_timeout_ms`. Written here, not
// taken from a library: Debian 12 has no prometheus-cpp, and cpp-httplib is not on the GPU image.
#include <atomic>
#include <mutex>
#include <string>
#include <thread>

namespace powershape::exporter {

class MetricsServer {
 public:
  // listen: "PORT" or "ADDR:PORT" (default address 0.0.0.0; port 0 picks a free one). Throws
  // std::runtime_error naming the address when it cannot listen.
  explicit MetricsServer(const std::string& listen, int client_timeout_ms = 2000);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  void set_metrics(std::string text);
  int port() const { return port_; }
  long served() const { return served_; }

 private:
  void run();
  void answer(int fd);
  int listen_fd_ = -1, port_ = 0, timeout_ms_;
  std::atomic<bool> stop_{false};
  std::atomic<long> served_{0};
  std::mutex mu_;
  std::string metrics_;
  std::thread thread_;
};

}  // namespace powershape::exporter
