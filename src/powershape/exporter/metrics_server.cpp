#include "powershape/exporter/metrics_server.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "powershape/util/error.hpp"

namespace powershape::exporter {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxRequest = 8192;  // a request line and headers; more is refused

std::string head(const char* status, const std::string& type, std::size_t length) {
  return std::string("HTTP/1.0 ") + status + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(length) + "\r\nConnection: close\r\n\r\n";
}

// One client: its request as it arrives, then its answer as the socket takes it.
struct Connection {
  int fd = -1;
  std::string peer;  // the client's address, without its port
  long seq = 0;      // the order it was accepted in: lower is older
  Clock::time_point deadline;
  std::string request, answer_head;
  std::shared_ptr<const std::string> body;  // the shared text, or null for a short answer
  std::size_t sent = 0;
  bool answering = false, draining = false;
  std::size_t size() const { return answer_head.size() + (body ? body->size() : 0); }
};

// The answer to a complete (or oversized) request.
void prepare_answer(Connection& c, const std::shared_ptr<const std::string>& metrics, bool& ok) {
  ok = false;
  c.answering = true;
  const auto plain = [&](const char* status, const std::string& text) {
    c.answer_head = head(status, "text/plain", text.size()) + text;
  };
  if (c.request.size() > kMaxRequest)
    return plain("431 Request Header Fields Too Large", "too large\n");
  const std::string line = c.request.substr(0, c.request.find_first_of("\r\n"));
  // HEAD answers as GET would, without the body (curl -I, load balancers' health checks).
  const bool head_only = line.rfind("HEAD ", 0) == 0;
  if ((line.rfind("GET ", 0) != 0 && !head_only) || line.find(" HTTP/1.") == std::string::npos)
    return plain("400 Bad Request", "expected GET /metrics\n");
  const std::size_t from = line.find(' ') + 1;
  const std::string target = line.substr(from, line.find(' ', from) - from);
  if (target.substr(0, target.find('?')) != "/metrics")
    return plain("404 Not Found", "see /metrics\n");
  c.body = head_only ? nullptr : metrics;
  c.answer_head = head("200 OK", "text/plain; version=0.0.4; charset=utf-8", metrics->size());
  ok = true;
}

// Sends what the socket takes now; true when all is sent.
bool send_some(Connection& c) {
  while (c.sent < c.size()) {
    iovec v[2];
    int n = 0;
    if (c.sent < c.answer_head.size()) {
      v[n++] = {const_cast<char*>(c.answer_head.data()) + c.sent, c.answer_head.size() - c.sent};
      if (c.body) v[n++] = {const_cast<char*>(c.body->data()), c.body->size()};
    } else {
      const std::size_t at = c.sent - c.answer_head.size();
      v[n++] = {const_cast<char*>(c.body->data()) + at, c.body->size() - at};
    }
    msghdr m{};
    m.msg_iov = v;
    m.msg_iovlen = static_cast<std::size_t>(n);
    const ssize_t k = sendmsg(c.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
    if (k <= 0) {
      c.sent = c.size();  // the client went away: nothing more to send
      return true;
    }
    c.sent += static_cast<std::size_t>(k);
  }
  return true;
}

// Reads what has arrived; false when the client closed or failed.
bool receive_some(Connection& c) {
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      if (!c.draining) c.request.append(buf, static_cast<std::size_t>(n));
      if (c.request.size() > kMaxRequest) return true;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    return false;
  }
}

std::string peer_of(const sockaddr_storage& sa) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (sa.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&sa)->sin_addr, text, sizeof text);
  if (sa.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&sa)->sin6_addr, text, sizeof text);
  return text;
}

// Closes the oldest connection that has not yet sent a whole request (else the oldest of all),
// among those of `peer` (empty: any), to make room for a new one; false when there is none.
bool make_room(std::vector<Connection>& conns, const std::string& peer) {
  Connection* oldest = nullptr;
  for (const bool idle_only : {true, false}) {
    for (auto& c : conns) {
      if (c.fd < 0 || (!peer.empty() && c.peer != peer) || (idle_only && c.answering)) continue;
      if (oldest == nullptr || c.seq < oldest->seq) oldest = &c;
    }
    if (oldest != nullptr) break;
  }
  if (oldest == nullptr) return false;
  close(oldest->fd);
  oldest->fd = -1;
  return true;
}

bool complete(const std::string& r) {
  return r.find("\r\n\r\n") != std::string::npos || r.find("\n\n") != std::string::npos ||
         r.size() > kMaxRequest;
}

}  // namespace

MetricsServer::MetricsServer(const std::string& listen, int client_timeout_ms, int max_connections,
                             int max_per_client)
    : timeout_ms_(client_timeout_ms),
      max_connections_(max_connections),
      max_per_client_(max_per_client),
      metrics_(std::make_shared<const std::string>()) {
  const auto bad = [&](const std::string& why) {
    throw invalid_input("listen", "cannot serve /metrics on " + listen + ": " + why);
  };
  std::string host = "127.0.0.1", port = listen;
  if (!listen.empty() && listen.front() == '[') {
    const auto close = listen.find("]:");
    if (close == std::string::npos) bad("expected [ADDR]:PORT");
    host = listen.substr(1, close - 1);
    port = listen.substr(close + 2);
  } else if (const auto colon = listen.rfind(':'); colon != std::string::npos) {
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
  }
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) bad("expected [ADDR:]PORT, PORT 0-65535");
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE | (host == "localhost" ? 0 : AI_NUMERICHOST);
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr)
    bad("not an IPv4 or IPv6 address");
  const int family = found->ai_family;
  listen_fd_ = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1, zero = 0;
  if (listen_fd_ >= 0) {
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6) setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  }
  const bool bound = listen_fd_ >= 0 && bind(listen_fd_, found->ai_addr, found->ai_addrlen) == 0 &&
                     ::listen(listen_fd_, 128) == 0;
  freeaddrinfo(found);
  if (!bound) {
    const std::string why = std::strerror(errno);
    if (listen_fd_ >= 0) close(listen_fd_);
    bad(why);
  }
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
  port_ = ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port
                                   : reinterpret_cast<sockaddr_in*>(&sa)->sin_port);
  address_ = (family == AF_INET6 ? "[" + host + "]" : host) + ":" + std::to_string(port_);
  thread_ = std::thread([this] { run(); });
}

MetricsServer::~MetricsServer() {
  stop_ = true;
  thread_.join();
  close(listen_fd_);
}

void MetricsServer::set_metrics(std::string text) {
  auto shared = std::make_shared<const std::string>(std::move(text));
  std::lock_guard lock(mu_);
  metrics_ = std::move(shared);
}

void MetricsServer::run() {
  std::vector<Connection> conns;
  std::vector<pollfd> fds;
  long accepted = 0;
  while (!stop_) {
    fds.assign(1, {listen_fd_, POLLIN, 0});
    for (const auto& c : conns) {
      const bool out = c.answering && c.sent < c.size();
      fds.push_back({c.fd, static_cast<short>(out ? POLLOUT : POLLIN), 0});
    }
    if (poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) break;
    const auto now = Clock::now();
    for (std::size_t i = 0; i < conns.size(); ++i) {
      Connection& c = conns[i];
      const short ev = fds[i + 1].revents;
      bool done = now > c.deadline;
      if (!done && (ev & (POLLIN | POLLHUP | POLLERR)) && !(c.answering && c.sent < c.size())) {
        done = !receive_some(c);
        if (!done && !c.answering && complete(c.request)) {
          std::shared_ptr<const std::string> metrics;
          {
            std::lock_guard lock(mu_);
            metrics = metrics_;
          }
          bool ok = false;
          prepare_answer(c, metrics, ok);
          if (ok) ++served_;
        }
      }
      if (!done && c.answering && c.sent < c.size() && send_some(c)) {
        // All sent: no more writes; what the client still sends is read and dropped until it
        // closes (closing with unread input would reset the connection and cut the answer).
        shutdown(c.fd, SHUT_WR);
        c.draining = true;
        c.deadline = std::min(c.deadline, now + std::chrono::seconds(1));
      }
      if (done) {
        close(c.fd);
        c.fd = -1;
      }
    }
    std::erase_if(conns, [](const Connection& c) { return c.fd < 0; });
    if (fds[0].revents & POLLIN) {
      for (;;) {
        sockaddr_storage sa{};
        socklen_t len = sizeof sa;
        const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len,
                               SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        // At a cap the newcomer gets in and the oldest idle connection goes (of its own client
        // first): a client that opens connections and sends nothing crowds out only itself, and a
        // scrape is answered while the cap is full.
        Connection c;
        c.fd = fd;
        c.peer = peer_of(sa);
        c.seq = ++accepted;
        c.deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
        const auto of_peer = std::count_if(conns.begin(), conns.end(), [&](const Connection& o) {
          return o.fd >= 0 && o.peer == c.peer;
        });
        const auto open = std::count_if(conns.begin(), conns.end(),
                                        [](const Connection& o) { return o.fd >= 0; });
        if (of_peer >= max_per_client_ ? make_room(conns, c.peer)
                                       : open >= max_connections_ && make_room(conns, ""))
          ++dropped_;  // counted before the client sees its close
        conns.push_back(std::move(c));
      }
      std::erase_if(conns, [](const Connection& c) { return c.fd < 0; });
    }
  }
  for (const auto& c : conns) close(c.fd);
}

}  // namespace powershape::exporter
