#include "powershape/exporter/metrics_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

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
