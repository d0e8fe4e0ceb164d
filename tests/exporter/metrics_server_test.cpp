#include "powershape/exporter/metrics_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace powershape::exporter {
namespace {

int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `request` and reads the whole answer (the server closes), within 5 s.
std::string ask(int port, const std::string& request) {
  const int fd = connect_to(port);
  if (fd < 0) return "";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return out;
}

}  // namespace

TEST(MetricsServer, ServesAThousandScrapesInARow) {
  MetricsServer s("127.0.0.1:0");
  s.set_metrics("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 650\n");
  for (int i = 0; i < 1000; ++i) {
    const std::string r = ask(s.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_EQ(r.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << i << ": " << r;
    ASSERT_NE(r.find("text/plain; version=0.0.4"), std::string::npos);
    ASSERT_NE(r.find("\r\n\r\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 650\n"), std::string::npos);
  }
  EXPECT_EQ(s.served(), 1000);
}

TEST(MetricsServer, MalformedAndOtherRequestsAreRefused) {
  MetricsServer s("127.0.0.1:0");
  EXPECT_EQ(ask(s.port(), "BREW /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.0 400", 0), 0u);
  EXPECT_EQ(ask(s.port(), "GET /other HTTP/1.1\r\n\r\n").rfind("HTTP/1.0 404", 0), 0u);
  EXPECT_EQ(ask(s.port(), "\x01\x02\x03\r\n\r\n").rfind("HTTP/1.0 400", 0), 0u);
  EXPECT_EQ(
      ask(s.port(), "GET /metrics HTTP/1.1\r\n" + std::string(10000, 'a')).rfind("HTTP/1.0 431", 0),
      0u);
  EXPECT_EQ(ask(s.port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.0 200", 0), 0u);
}

// HEAD: the status and the length a GET would get, no body.
TEST(MetricsServer, HeadAnswersWithoutTheBody) {
  MetricsServer s("127.0.0.1:0");
  s.set_metrics("x 1\n");
  const std::string r = ask(s.port(), "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.0 200", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Length: 4\r\n"), std::string::npos) << r;
  EXPECT_EQ(r.substr(r.find("\r\n\r\n") + 4), "");
}

// A client that connects and says nothing is dropped after the timeout; the next is served.
TEST(MetricsServer, ASlowClientDelaysOthersOnlyUntilItsTimeout) {
  MetricsServer s("127.0.0.1:0", 300);
  const int idle = connect_to(s.port());
  ASSERT_GE(idle, 0);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string r = ask(s.port(), "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.0 200", 0), 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500));
  close(idle);
}

// The default is loopback: exposing it is a choice (0.0.0.0:PORT or [::]:PORT).
TEST(MetricsServer, ListensOnLoopbackUnlessToldOtherwise) {
  MetricsServer s("0");
  EXPECT_EQ(s.address(), "127.0.0.1:" + std::to_string(s.port()));
  EXPECT_EQ(
      ask(s.port(), "GET /metrics?collect%5B%5D=gpu HTTP/1.1\r\n\r\n").rfind("HTTP/1.0 200", 0),
      0u);  // a query string is served
}

TEST(MetricsServer, ServesIpv6) {
  std::unique_ptr<MetricsServer> s;
  try {
    s = std::make_unique<MetricsServer>("[::1]:0");
  } catch (const std::runtime_error& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  s->set_metrics("x 1\n");
  EXPECT_EQ(s->address(), "[::1]:" + std::to_string(s->port()));
  const int fd = socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons(static_cast<uint16_t>(s->port()));
  inet_pton(AF_INET6, "::1", &sa.sin6_addr);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  const std::string req = "GET /metrics HTTP/1.1\r\n\r\n";
  send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  char buf[256];
  std::string got;
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;)
    got.append(buf, static_cast<std::size_t>(n));
  close(fd);
  EXPECT_NE(got.find("\r\n\r\nx 1\n"), std::string::npos) << got;
}

// Twenty slowloris clients (a byte every 100 ms, never a whole request) beside a thousand scrapes:
// every scrape is answered, promptly.
TEST(MetricsServer, SlowlorisDoesNotStarveScrapes) {
  MetricsServer s("127.0.0.1:0", 2000);
  s.set_metrics("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 650\n");
  std::vector<int> slow;
  for (int i = 0; i < 20; ++i) slow.push_back(connect_to(s.port()));
  std::atomic<bool> stop{false};
  std::thread drip([&] {
    while (!stop) {
      for (int fd : slow) send(fd, "G", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  int answered = 0;
  for (int i = 0; i < 1000; ++i)
    answered += ask(s.port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.0 200", 0) == 0;
  const auto took = std::chrono::steady_clock::now() - t0;
  stop = true;
  drip.join();
  for (int fd : slow) close(fd);
  EXPECT_EQ(answered, 1000);
  EXPECT_LT(took, std::chrono::seconds(10));
}

// A client that asks for an 8 MB answer and never reads it holds only its own connection.
TEST(MetricsServer, AClientThatNeverReadsBlocksNobody) {
  MetricsServer s("127.0.0.1:0", 1000);
  s.set_metrics(std::string(8 << 20, '#') + "\n");
  const int stuck = connect_to(s.port());
  const std::string req = "GET /metrics HTTP/1.1\r\n\r\n";
  send(stuck, req.data(), req.size(), MSG_NOSIGNAL);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    const std::string r = ask(s.port(), req);
    ASSERT_EQ(r.size(), r.find("\r\n\r\n") + 4 + (8u << 20) + 1) << i;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  close(stuck);
}

// At the cap a new connection gets in and the oldest idle one is closed: four idle clients
// (with a deadline far beyond the test) do not keep a scrape out.
TEST(MetricsServer, AtTheCapTheOldestIdleConnectionMakesRoom) {
  MetricsServer s("127.0.0.1:0", 20000, 4);
  s.set_metrics("x 1\n");
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(connect_to(s.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(ask(s.port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.0 200", 0), 0u);
  EXPECT_GE(s.dropped(), 1);
  char c;
  pollfd p{idle.front(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 10000), 1);
  EXPECT_EQ(recv(idle.front(), &c, 1, 0), 0);  // the oldest, closed by the server
  for (int fd : idle) close(fd);
}

// Two hundred connections that send nothing, from one client (past both the per-client limit and
// the cap), beside a thousand scrapes: every scrape is answered, promptly (once, 64 such
// connections locked every scrape out until their deadline).
TEST(MetricsServer, ConnectionsThatSendNothingNeverLockOutAScrape) {
  MetricsServer s("127.0.0.1:0", 20000);
  s.set_metrics("x 1\n");
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(connect_to(s.port()));
  const auto t0 = std::chrono::steady_clock::now();
  int answered = 0;
  for (int i = 0; i < 1000; ++i) {
    answered += ask(s.port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.0 200", 0) == 0;
    if (i % 10 == 0) idle.push_back(connect_to(s.port()));  // and more keep coming
  }
  EXPECT_EQ(answered, 1000);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_GE(s.dropped(), 200 - 16);
  for (int fd : idle) close(fd);
}

TEST(MetricsServer, ABadAddressIsNamed) {
  EXPECT_THROW(MetricsServer("nonsense:80"), std::runtime_error);
  EXPECT_THROW(MetricsServer("70000"), std::runtime_error);
  try {
    MetricsServer("1.2.3.4:x");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("1.2.3.4:x"), std::string::npos);
  }
}

}  // namespace powershape::exporter
