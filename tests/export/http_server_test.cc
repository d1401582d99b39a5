// The /metrics server on real loopback sockets: content negotiation, read-only methods,
// malformed and oversized requests, a flood of connections, slow and idle clients.
#include "export/http_server.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/http_client.h"

namespace rtpulse::exporter {
namespace {

using namespace std::chrono_literals;

using testutil::ConnectLoopback;
using testutil::HttpExchange;
using testutil::HttpGet;
using testutil::SendAll;

size_t OpenFds() {
  size_t n = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  while (dirent* e = ::readdir(dir)) n += e->d_name[0] != '.' ? 1 : 0;
  ::closedir(dir);
  return n;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions options = {}) {
    options.listen = {"127.0.0.1", 0};
    auto started = MetricsServer::Start(options, [this](ExpositionFormat format) {
      ++renders_;
      return format == ExpositionFormat::kOpenMetrics ? std::string("om_metric 1\n# EOF\n")
                                                      : std::string("text_metric 1\n");
    });
    ASSERT_TRUE(started) << started.error().message;
    server_ = std::move(*started);
    ASSERT_GT(server_->port(), 0);
  }
  std::atomic<int> renders_{0};
  std::unique_ptr<MetricsServer> server_;
};

TEST_F(HttpServerTest, MetricsInTheNegotiatedFormat) {
  Start();
  const std::string text = HttpGet(server_->port(), "/metrics").raw;
  EXPECT_NE(text.find("HTTP/1.1 200"), std::string::npos) << text;
  EXPECT_NE(text.find("Content-Type: text/plain; version=0.0.4; charset=utf-8"), std::string::npos);
  EXPECT_NE(text.find("\r\n\r\ntext_metric 1\n"), std::string::npos) << text;
  const std::string om = HttpGet(server_->port(), "/metrics",
                                 "application/openmetrics-text;version=1.0.0,text/plain;q=0.5")
                             .raw;
  EXPECT_NE(om.find("Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8"),
            std::string::npos)
      << om;
  EXPECT_NE(om.find("\r\n\r\nom_metric 1\n# EOF\n"), std::string::npos) << om;
  EXPECT_EQ(server_->stats().metrics_served, 2U);
  EXPECT_EQ(server_->authority(), "127.0.0.1:" + std::to_string(server_->port()));
}

TEST_F(HttpServerTest, ReadOnlyWithNotFoundAndMethodNotAllowed) {
  Start();
  const std::string head =
      HttpExchange(server_->port(),
                   "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
          .raw;
  EXPECT_NE(head.find("HTTP/1.1 200"), std::string::npos) << head;
  EXPECT_EQ(head.find("text_metric"), std::string::npos) << head;
  const std::string post = HttpExchange(server_->port(),
                                        "POST /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                        "Content-Length: 5\r\n\r\nhello")
                               .raw;
  EXPECT_NE(post.find("HTTP/1.1 405"), std::string::npos) << post;
  EXPECT_NE(post.find("Allow: GET, HEAD"), std::string::npos) << post;
  const std::string missing = HttpGet(server_->port(), "/admin").raw;
  EXPECT_NE(missing.find("HTTP/1.1 404"), std::string::npos) << missing;
  const std::string landing = HttpGet(server_->port(), "/").raw;
  EXPECT_NE(landing.find("href=\"/metrics\""), std::string::npos) << landing;
  const HttpServerStats s = server_->stats();
  EXPECT_EQ(s.bad_method, 1U);
  EXPECT_EQ(s.not_found, 1U);
  EXPECT_EQ(s.metrics_served, 1U);  // the HEAD
}

TEST_F(HttpServerTest, MalformedAndOversizedRequestsAreRefusedAndServingGoesOn) {
  HttpServerOptions options;
  options.idle_timeout_s = 2;  // the TLS hello below waits for more bytes until then
  Start(options);
  const uint16_t port = server_->port();
  // A request line without method and target: libmicrohttpd closes without an answer.
  const testutil::HttpReply garbage = HttpExchange(port, "GARBAGE\r\n\r\n");
  EXPECT_TRUE(garbage.status == 0 || garbage.status == 400) << garbage.raw;
  EXPECT_EQ(garbage.raw.find("text_metric"), std::string::npos);
  // An empty target, a header without its colon: 400.
  EXPECT_EQ(HttpExchange(port, "GET  HTTP/1.1\r\nHost: x\r\n\r\n").status, 400);
  EXPECT_EQ(HttpExchange(port, "GET /metrics HTTP/1.1\r\nHost x\r\n\r\n").status, 400);
  EXPECT_EQ(HttpExchange(port, "GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n").status, 505);
  // TLS to a plain HTTP port: no answer, closed at the idle timeout.
  EXPECT_EQ(
      HttpExchange(port, std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11)).status,
      0);
  std::string huge = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 2000; ++i) {
    huge += "X-Padding-" + std::to_string(i) + ": " + std::string(40, 'a') + "\r\n";
  }
  const testutil::HttpReply refused = HttpExchange(port, huge + "\r\n");
  EXPECT_EQ(refused.body.find("text_metric"), std::string::npos);
  EXPECT_TRUE(refused.status == 0 || refused.status == 431 || refused.status == 413)
      << refused.status;
  // None of it stopped the server.
  EXPECT_NE(HttpGet(port, "/metrics").raw.find("text_metric 1"), std::string::npos);
  EXPECT_EQ(server_->stats().metrics_served, 1U);
}

TEST_F(HttpServerTest, AFloodOfConnectionsIsBoundedAndServingResumes) {
  HttpServerOptions options;
  options.max_connections = 8;
  options.idle_timeout_s = 1;
  Start(options);
  const size_t before = OpenFds();
  std::vector<int> held;
  for (int i = 0; i < 100; ++i) {
    const int fd = ConnectLoopback(server_->port(), 200ms);
    if (fd >= 0) held.push_back(fd);
  }
  // The server takes at most its 8 connections; the rest wait in the kernel's listen queue
  // (or time out connecting). Our 100 client ends are the other descriptors.
  EXPECT_LE(OpenFds(), before + held.size() + 8)
      << "before " << before << " clients " << held.size();
  // The flood stays connected and silent: the server closes the idle ones and takes the
  // queued ones in turn, so a scrape is answered without any client giving up.
  std::string reply;
  for (int attempt = 0; attempt < 300 && reply.find("text_metric 1") == std::string::npos;
       ++attempt) {
    reply = HttpGet(server_->port(), "/metrics").raw;
  }
  EXPECT_NE(reply.find("text_metric 1"), std::string::npos) << reply;
  for (int fd : held) ::close(fd);
  EXPECT_LE(OpenFds(), before + 8);
}

TEST_F(HttpServerTest, SlowClientsDoNotHoldUpAScrape) {
  Start();
  std::atomic<bool> stop{false};
  std::vector<std::thread> slow;
  std::atomic<int> slow_finished{0};
  for (int i = 0; i < 10; ++i) {
    slow.emplace_back([&] {
      const int fd = ConnectLoopback(server_->port());
      const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
      for (char c : request) {
        if (stop) break;
        SendAll(fd, std::string(1, c));
        std::this_thread::sleep_for(100ms);  // a byte every 100 ms: 5 s for the request
      }
      ::close(fd);
      ++slow_finished;
    });
  }
  std::this_thread::sleep_for(300ms);
  const std::string reply = HttpGet(server_->port(), "/metrics").raw;
  // Answered while every slow client was still sending its request.
  EXPECT_EQ(slow_finished.load(), 0);
  EXPECT_NE(reply.find("text_metric 1"), std::string::npos) << reply;
  stop = true;
  for (auto& t : slow) t.join();
}

TEST_F(HttpServerTest, AnIdleConnectionIsClosedAfterTheTimeout) {
  HttpServerOptions options;
  options.idle_timeout_s = 1;
  Start(options);
  const int fd = ConnectLoopback(server_->port());
  ASSERT_GE(fd, 0);
  SendAll(fd, "GET /met");  // half a request, then nothing
  const auto start = std::chrono::steady_clock::now();
  char c = 0;
  const ssize_t n = ::recv(fd, &c, 1, 0);  // SO_RCVTIMEO 10 s: the server closes first
  const auto waited = std::chrono::steady_clock::now() - start;
  ::close(fd);
  EXPECT_EQ(n, 0) << "the server did not close the idle connection";
  EXPECT_LT(waited, 10s);
}

TEST(HttpServerStartTest, APortInUseIsAUsageErrorNamingIt) {
  uint16_t port = 0;
  const int fd = testutil::ListenOnLoopback(&port);
  ASSERT_GE(fd, 0);
  HttpServerOptions options;
  options.listen = {"127.0.0.1", port};
  auto server = MetricsServer::Start(options, [](ExpositionFormat) { return std::string(); });
  ::close(fd);
  ASSERT_FALSE(server);
  EXPECT_EQ(server.error().code, ExitCode::kUsage);
  EXPECT_NE(server.error().message.find("127.0.0.1:" + std::to_string(port)), std::string::npos);
  EXPECT_NE(server.error().message.find("in use"), std::string::npos) << server.error().message;
}

TEST(HttpServerStartTest, AnAddressNotOnThisMachineIsAUsageError) {
  HttpServerOptions options;
  options.listen = {"192.0.2.1", 0};  // TEST-NET-1: never a local address
  auto server = MetricsServer::Start(options, [](ExpositionFormat) { return std::string(); });
  ASSERT_FALSE(server);
  EXPECT_EQ(server.error().code, ExitCode::kUsage);
  EXPECT_NE(server.error().message.find("192.0.2.1"), std::string::npos);
}

TEST(ListenAddressTest, Forms) {
  auto a = ParseListenAddress("127.0.0.1:9100");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9100);
  a = ParseListenAddress(":9464");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "0.0.0.0");
  a = ParseListenAddress("localhost");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "localhost");
  EXPECT_EQ(a->port, kDefaultPort);
  a = ParseListenAddress("[::1]:8080");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 8080);
  a = ParseListenAddress("[::]");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "::");
  for (const char* bad : {"", ":", "host:", "host:99999", "host:12ab", "::1:80", "[::1", "[::1]80",
                          "[]:80", "9464"}) {
    auto r = ParseListenAddress(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ExitCode::kUsage);
    EXPECT_NE(r.error().message.find("--listen"), std::string::npos);
  }
  EXPECT_NE(ParseListenAddress("9464").error().message.find("give :9464"), std::string::npos);
}

}  // namespace
}  // namespace rtpulse::exporter
