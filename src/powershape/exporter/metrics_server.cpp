#include "powershape/exporter/metrics_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "powershape/util/error.hpp"

namespace powershape::exporter {
namespace {

constexpr std::size_t kMaxRequest = 8192;  // a request line and headers; more is malformed

void send_all(int fd, const std::string& s) {
  std::size_t at = 0;
  while (at < s.size()) {
    const ssize_t n = send(fd, s.data() + at, s.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client went away: nothing to do
    at += static_cast<std::size_t>(n);
  }
}

std::string response(const char* status, const std::string& type, const std::string& body) {
  return std::string("HTTP/1.0 ") + status + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         body;
}

}  // namespace

MetricsServer::MetricsServer(const std::string& listen, int client_timeout_ms)
    : timeout_ms_(client_timeout_ms) {
  std::string addr = "0.0.0.0", port = listen;
  if (auto colon = listen.rfind(':'); colon != std::string::npos) {
    addr = listen.substr(0, colon);
    port = listen.substr(colon + 1);
  }
  auto bad = [&](const std::string& why) {
    throw invalid_input("cannot serve /metrics on " + listen + ": " + why);
  };
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) bad("expected [ADDR:]PORT, PORT 0-65535");
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(p));
  if (inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) bad("not an IPv4 address");
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) bad(std::strerror(errno));
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::listen(listen_fd_, 16) != 0) {
    const std::string why = std::strerror(errno);
    close(listen_fd_);
    bad(why);
  }
  socklen_t len = sizeof sa;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
  port_ = ntohs(sa.sin_port);
  thread_ = std::thread([this] { run(); });
}

MetricsServer::~MetricsServer() {
  stop_ = true;
  thread_.join();
  close(listen_fd_);
}

void MetricsServer::set_metrics(std::string text) {
  std::lock_guard lock(mu_);
  metrics_ = std::move(text);
}

void MetricsServer::run() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    answer(fd);
    close(fd);
  }
}

// Reads the request head within the timeout (a slow client is dropped), then answers.
void MetricsServer::answer(int fd) {
  std::string req;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  while (req.find("\r\n\r\n") == std::string::npos && req.find("\n\n") == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0 || stop_) return;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min<long long>(left, 100))) <= 0) continue;
    char buf[1024];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    req.append(buf, static_cast<std::size_t>(n));
    if (req.size() > kMaxRequest) {
      send_all(fd, response("431 Request Header Fields Too Large", "text/plain", "too large\n"));
      return;
    }
  }
  const std::string line = req.substr(0, req.find_first_of("\r\n"));
  if (line.rfind("GET ", 0) != 0 || line.find(" HTTP/1.") == std::string::npos) {
    send_all(fd, response("400 Bad Request", "text/plain", "expected GET /metrics\n"));
    return;
  }
  const std::string path = line.substr(4, line.find(' ', 4) - 4);
  if (path != "/metrics") {
    send_all(fd, response("404 Not Found", "text/plain", "see /metrics\n"));
    return;
  }
  std::string body;
  {
    std::lock_guard lock(mu_);
    body = metrics_;
  }
  send_all(fd, response("200 OK", "text/plain; version=0.0.4; charset=utf-8", body));
  ++served_;
}

}  // namespace powershape::exporter
