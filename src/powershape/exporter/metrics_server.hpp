#pragma once
// The HTTP server for Prometheus scrapes: GET /metrics (any query string) answers the latest text
// it was given (text/plain; version=0.0.4), anything else 404 or 400; HTTP/1.0 answers with
// Connection: close. It stays up against clients that misbehave: one thread polls every
// connection without blocking, so a client that sends slowly (slowloris) or never reads its answer
// holds only its own connection, and only until its deadline (client_timeout_ms for the whole
// exchange); at max_connections, or at max_per_client from one address, a new connection gets
// in and the oldest idle one (no whole request yet; of that client first) is closed, so that
// clients that open connections and send nothing never lock out a scrape; the text is rendered by
// the caller once a second and shared by every scrape, not copied or rendered per scrape. Written
// here rather than taken from cpp-httplib: the GPU image has no cpp-httplib, Debian's links OpenSSL
// and brotli for a read-only plain-text endpoint, and its thread per connection would need the same
// caps; this is one poll loop of ~200 lines.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace powershape::exporter {

class MetricsServer {
 public:
  // listen: "PORT" (loopback, 127.0.0.1), "ADDR:PORT" (IPv4; 0.0.0.0 to expose it),
  // "[ADDR]:PORT" (IPv6; [::] serves IPv4 too) or "localhost:PORT"; port 0 picks a free one.
  // Throws naming the address when it cannot listen.
  explicit MetricsServer(const std::string& listen, int client_timeout_ms = 5000,
                         int max_connections = 64, int max_per_client = 16);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  void set_metrics(std::string text);
  int port() const { return port_; }
  // Where it listens, as a URL's host and port: "127.0.0.1:9401", "[::]:9401".
  const std::string& address() const { return address_; }
  long served() const { return served_; }
  long dropped() const { return dropped_; }  // connections closed to make room at a cap

 private:
  void run();
  int listen_fd_ = -1, port_ = 0, timeout_ms_, max_connections_, max_per_client_;
  std::string address_;
  std::atomic<bool> stop_{false};
  std::atomic<long> served_{0}, dropped_{0};
  std::mutex mu_;
  std::shared_ptr<const std::string> metrics_;
  std::thread thread_;
};

}  // namespace powershape::exporter
