#include "export/http_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

#include "core/printable.h"

namespace rtpulse::exporter {

struct MetricsServer::Impl {
  MetricsRenderer renderer;
  MHD_Daemon* daemon = nullptr;
  mutable std::mutex mu;
  HttpServerStats stats;

  void Count(uint64_t HttpServerStats::*field) {
    std::lock_guard<std::mutex> lock(mu);
    ++(stats.*field);
  }
};

namespace {

std::string ErrnoMessage(int err) {
  return std::system_category().message(err);
}

constexpr std::string_view kLandingPage =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rtpulse serve</title></head>\n"
    "<body><h1>rtpulse serve</h1>\n<p>Latency of this machine, measured continuously: "
    "<a href=\"/metrics\">/metrics</a> (Prometheus text format or OpenMetrics).</p>\n"
    "</body></html>\n";

MHD_Result Respond(MHD_Connection* connection, unsigned status, std::string_view body,
                   std::string_view content_type, const char* allow = nullptr) {
  MHD_Response* response = MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                          std::string(content_type).c_str());
  if (allow != nullptr) MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, allow);
  const MHD_Result queued = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return queued;
}

MHD_Result Handle(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload_data*/,
                  size_t* /*upload_data_size*/, void** /*req_cls*/) {
  auto* impl = static_cast<MetricsServer::Impl*>(cls);
  const std::string_view m = method;
  const bool head = m == MHD_HTTP_METHOD_HEAD;
  if (m != MHD_HTTP_METHOD_GET && !head) {
    impl->Count(&HttpServerStats::bad_method);
    return Respond(connection, MHD_HTTP_METHOD_NOT_ALLOWED,
                   "rtpulse serve is read-only: GET /metrics\n", "text/plain; charset=utf-8",
                   "GET, HEAD");
  }
  const std::string_view path = url;
  if (path == "/metrics") {
    const char* accept =
        MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    const ExpositionFormat format = NegotiateFormat(accept == nullptr ? "" : accept);
    const std::string body = impl->renderer(format);
    impl->Count(&HttpServerStats::metrics_served);
    return Respond(connection, MHD_HTTP_OK, head ? std::string_view{} : body, ContentType(format));
  }
  if (path == "/") {
    impl->Count(&HttpServerStats::other_served);
    return Respond(connection, MHD_HTTP_OK, head ? std::string_view{} : kLandingPage,
                   "text/html; charset=utf-8");
  }
  impl->Count(&HttpServerStats::not_found);
  return Respond(connection, MHD_HTTP_NOT_FOUND, "not found: rtpulse serve has /metrics\n",
                 "text/plain; charset=utf-8");
}

/// "HOST:PORT" ("[V6]:PORT"), the host quoted as printable text (it comes from --listen).
std::string Authority(const std::string& host, uint16_t port) {
  const std::string shown = Printable(host);
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", shown, port)
                                             : fmt::format("{}:{}", shown, port);
}

/// Creates, binds and listens a socket for `address`; the errors name the address and say
/// what to do.
Expected<int> BindListen(const ListenAddress& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = fmt::format("{}", address.port);
  const std::string where = Authority(address.host, address.port);
  if (const int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return UsageError(
        fmt::format("--listen {}: cannot resolve '{}': {} (give an address of this "
                    "machine, e.g. 127.0.0.1:{} or 0.0.0.0:{})",
                    where, Printable(address.host), gai_strerror(rc), address.port, address.port));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(found, &freeaddrinfo);
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  if (fd < 0) {
    return ResourceError(
        fmt::format("--listen {}: cannot create a socket: {}", where, ErrnoMessage(errno)));
  }
  // A restarted serve may bind while the last one's connections sit in TIME_WAIT; a port
  // another process listens on is still refused (EADDRINUSE).
  const int on = 1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EADDRINUSE) {
      return UsageError(fmt::format(
          "--listen {}: the address is in use (another rtpulse serve or exporter?): stop it or "
          "give another port, e.g. --listen {}",
          where,
          Authority(address.host,
                    static_cast<uint16_t>(address.port == 65535 ? 65534 : address.port + 1))));
    }
    if (err == EACCES) {
      return ResourceError(fmt::format(
          "--listen {}: {} (a port below 1024 needs root or CAP_NET_BIND_SERVICE; the default "
          "is {})",
          where, ErrnoMessage(err), kDefaultPort));
    }
    return UsageError(
        fmt::format("--listen {}: cannot bind: {} (give an address of this "
                    "machine, e.g. 127.0.0.1:{})",
                    where, ErrnoMessage(err), address.port));
  }
  if (::listen(fd, 64) != 0) {
    const int err = errno;
    ::close(fd);
    return Failure(fmt::format("--listen {}: cannot listen: {}", where, ErrnoMessage(err)));
  }
  return fd;
}

uint16_t BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  }
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

}  // namespace

Expected<std::unique_ptr<MetricsServer>> MetricsServer::Start(const HttpServerOptions& options,
                                                              MetricsRenderer renderer) {
  auto fd = BindListen(options.listen);
  if (!fd) return fd.error();
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->impl_ = std::make_unique<Impl>();
  server->impl_->renderer = std::move(renderer);
  server->port_ = BoundPort(*fd);
  server->host_ = options.listen.host;
  Impl* impl = server->impl_.get();
  // libmicrohttpd's thread inherits the affinity and policy of the thread that starts it: a
  // short-lived thread takes the housekeeping CPUs and SCHED_OTHER first, so the server never
  // runs on (or preempts) a probe's CPU.
  std::thread starter([&] {
    sched_param param{};
    (void)pthread_setschedparam(pthread_self(), SCHED_OTHER, &param);
    if (!options.cpus.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int cpu : options.cpus) {
        if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(static_cast<size_t>(cpu), &set);
      }
      (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    impl->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, nullptr, nullptr, &Handle, impl,
        MHD_OPTION_LISTEN_SOCKET, static_cast<MHD_socket>(*fd), MHD_OPTION_CONNECTION_LIMIT,
        static_cast<unsigned>(options.max_connections), MHD_OPTION_CONNECTION_TIMEOUT,
        static_cast<unsigned>(options.idle_timeout_s), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        static_cast<size_t>(options.request_memory_bytes), MHD_OPTION_END);
  });
  starter.join();
  if (impl->daemon == nullptr) {
    ::close(*fd);
    return Failure(fmt::format("--listen {}: libmicrohttpd could not start its server thread",
                               Authority(options.listen.host, server->port_)));
  }
  return server;
}

MetricsServer::~MetricsServer() {
  Stop();
}

void MetricsServer::Stop() {
  if (impl_ && impl_->daemon != nullptr) {
    MHD_stop_daemon(impl_->daemon);  // joins its thread, closes the socket and connections
    impl_->daemon = nullptr;
  }
}

std::string MetricsServer::authority() const {
  return Authority(host_, port_);
}

HttpServerStats MetricsServer::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->stats;
}

}  // namespace rtpulse::exporter
