// The build without libmicrohttpd (RTPULSE_HTTP=OFF): `serve` says what to install. The
// address parsing is the same as in http_server.cc's build.
#include <fmt/format.h>

#include "export/http_server.h"

namespace rtpulse::exporter {

struct MetricsServer::Impl {};

Expected<std::unique_ptr<MetricsServer>> MetricsServer::Start(const HttpServerOptions& /*options*/,
                                                              MetricsRenderer /*renderer*/) {
  return ResourceError(
      "this rtpulse was built without its HTTP server: apt-get install libmicrohttpd-dev "
      "(scripts/install-deps) and rebuild; batch runs can export with --textfile DIR");
}

MetricsServer::~MetricsServer() = default;
void MetricsServer::Stop() {}
std::string MetricsServer::authority() const {
  return fmt::format("{}:{}", host_, port_);
}
HttpServerStats MetricsServer::stats() const {
  return {};
}

}  // namespace rtpulse::exporter
