#include "support/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace rtpulse::testutil {

int ConnectLoopback(uint16_t port, std::chrono::milliseconds connect_timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // A blocking connect() gives up after SO_SNDTIMEO (a full listen queue drops the SYNs).
  const auto ms = connect_timeout.count();
  timeval send_timeout{static_cast<time_t>(ms / 1000),
                       static_cast<suseconds_t>((ms % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

bool SendAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string ReceiveAll(int fd) {
  std::string out;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

namespace {

/// The body of a `Transfer-Encoding: chunked` reply (Prometheus' API sends large answers so).
std::string Dechunk(const std::string& chunked) {
  std::string out;
  size_t at = 0;
  while (at < chunked.size()) {
    const size_t line_end = chunked.find("\r\n", at);
    if (line_end == std::string::npos) break;
    const size_t size = std::strtoul(chunked.substr(at, line_end - at).c_str(), nullptr, 16);
    if (size == 0) break;
    out += chunked.substr(line_end + 2, size);
    at = line_end + 2 + size + 2;
  }
  return out;
}

bool HasHeader(const std::string& headers, const std::string& line) {
  std::string lower;
  for (char c : headers) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find(line) != std::string::npos;
}

}  // namespace

HttpReply HttpExchange(uint16_t port, const std::string& request) {
  HttpReply reply;
  const int fd = ConnectLoopback(port);
  if (fd < 0) return reply;
  SendAll(fd, request);
  reply.raw = ReceiveAll(fd);
  ::close(fd);
  const size_t end = reply.raw.find("\r\n\r\n");
  reply.headers = reply.raw.substr(0, end);
  if (end != std::string::npos) reply.body = reply.raw.substr(end + 4);
  if (HasHeader(reply.headers, "\r\ntransfer-encoding: chunked")) reply.body = Dechunk(reply.body);
  if (reply.raw.rfind("HTTP/1.", 0) == 0 && reply.raw.size() > 12) {
    reply.status = std::atoi(reply.raw.c_str() + 9);
  }
  return reply;
}

HttpReply HttpGet(uint16_t port, const std::string& target, const std::string& accept) {
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!accept.empty()) request += "Accept: " + accept + "\r\n";
  return HttpExchange(port, request + "\r\n");
}

namespace {

/// Binds `fd` to an ephemeral port on 127.0.0.1: the port, or 0.
uint16_t BindLoopback(int fd) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return 0;
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  return ntohs(addr.sin_port);
}

}  // namespace

uint16_t FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const uint16_t port = BindLoopback(fd);
  ::close(fd);
  return port;
}

int ListenOnLoopback(uint16_t* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  *port = BindLoopback(fd);
  if (*port == 0 || ::listen(fd, 1) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string UrlEncode(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

}  // namespace rtpulse::testutil
