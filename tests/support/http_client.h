// A small HTTP/1.1 client on raw loopback sockets, for the tests of `rtpulse serve` and its
// server: what a scraper, a slow client or a malformed request really sends.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace rtpulse::testutil {

struct HttpReply {
  int status = 0;       ///< 0: no HTTP answer (refused, closed or timed out).
  std::string headers;  ///< Status line and headers, as received.
  std::string body;     ///< Decoded when the reply was chunked.
  std::string raw;      ///< Everything received.
};

/// A connected TCP socket to 127.0.0.1:`port` with a 10 s receive timeout, or -1 (refused,
/// or not accepted into the server's listen queue within `connect_timeout`).
int ConnectLoopback(uint16_t port,
                    std::chrono::milliseconds connect_timeout = std::chrono::seconds(5));
/// Sends all of `data`; false when the peer closed.
bool SendAll(int fd, const std::string& data);
/// Everything received until the peer closes (or the receive timeout).
std::string ReceiveAll(int fd);
/// Sends `request` as it is on a new connection and reads the reply until the server closes.
HttpReply HttpExchange(uint16_t port, const std::string& request);
/// GET `target` (path and query) with Connection: close and, when given, an Accept header.
HttpReply HttpGet(uint16_t port, const std::string& target, const std::string& accept = "");
/// A port that was free on 127.0.0.1 a moment ago (bound to port 0, then closed).
uint16_t FreeLoopbackPort();
/// A socket listening on an ephemeral 127.0.0.1 port, its number in `*port`; -1 on failure.
/// What another program holding a port looks like to a server that wants it.
int ListenOnLoopback(uint16_t* port);
/// `text` percent-encoded for a URL query value.
std::string UrlEncode(const std::string& text);

}  // namespace rtpulse::testutil
