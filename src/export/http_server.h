// The read-only HTTP endpoint of `rtpulse serve` (docs/fleet.md): GET /metrics in the
// Prometheus text format or OpenMetrics by content negotiation, through GNU libmicrohttpd
// (one event-driven thread, so slow or idle clients hold a connection slot, never a thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "export/exposition.h"

namespace rtpulse::exporter {

inline constexpr uint16_t kDefaultPort = 9464;  ///< `serve`'s default port (docs/fleet.md).

/// Where the server listens.
struct ListenAddress {
  std::string host = "127.0.0.1";  ///< A numeric IPv4 or IPv6 address, or a name to resolve.
  uint16_t port = kDefaultPort;    ///< 0: any free port (tests).
};

/// `--listen`: "HOST:PORT", "HOST" (port 9464), ":PORT" (every IPv4 interface, 0.0.0.0),
/// "[V6]:PORT" or "[V6]". A usage error names the value and the fix.
Expected<ListenAddress> ParseListenAddress(std::string_view text);

struct HttpServerOptions {
  ListenAddress listen;
  /// Connections open at once; one more is accepted and closed at once. Bounds the file
  /// descriptors and memory a flood of clients can take.
  unsigned max_connections = 32;
  /// A connection idle (nothing read or written) this long is closed: slow clients and
  /// half-sent requests cannot hold a slot for longer.
  unsigned idle_timeout_s = 10;
  /// Memory a connection may use for its request (line and headers): above it, 431/413.
  size_t request_memory_bytes = 32 * 1024;
  /// CPUs the server's thread may run on, at SCHED_OTHER (empty: leave the affinity).
  std::vector<int> cpus;
};

/// Renders the body of GET /metrics in the negotiated format; called on the server's thread.
using MetricsRenderer = std::function<std::string(ExpositionFormat)>;

/// Counts of what the server answered, for its own metrics and the tests.
struct HttpServerStats {
  uint64_t metrics_served = 0;  ///< 200 on /metrics.
  uint64_t other_served = 0;    ///< 200 on /.
  uint64_t not_found = 0;       ///< 404.
  uint64_t bad_method = 0;      ///< 405.
};

class MetricsServer {
 public:
  /// Binds `options.listen` and starts serving. A port in use, an address that is not this
  /// machine's, or a bad host is a usage error that names the address and the fix; a port
  /// below 1024 without the privilege is a resource error.
  static Expected<std::unique_ptr<MetricsServer>> Start(const HttpServerOptions& options,
                                                        MetricsRenderer renderer);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  /// The port it listens on (the one the kernel chose for port 0).
  uint16_t port() const { return port_; }
  /// "HOST:PORT" as a URL authority ("[::1]:9464" for IPv6).
  std::string authority() const;
  HttpServerStats stats() const;
  /// Closes the listening socket and every connection, then returns (idempotent).
  void Stop();

  struct Impl;

 private:
  MetricsServer() = default;
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
  std::string host_;
};

}  // namespace rtpulse::exporter
