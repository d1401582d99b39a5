// net: UDP datagrams or a TCP stream over 127.0.0.1. Loopback delivery runs the receive
// path in NET_RX softirq on the sending CPU, which is the load this is for.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "load/builtins.h"
#include "load/worker.h"

namespace rtpulse::load {
namespace {

Error SocketError(const char* what) {
  return Failure(fmt::format("net: {}: {}", what, std::strerror(errno)));
}

class NetWork final : public Work {
 public:
  NetWork(bool tcp, size_t size) : tcp_(tcp), size_(size), buffer_(size, 'n') {}
  ~NetWork() override {
    for (int fd : {listen_fd_, tx_fd_, rx_fd_}) {
      if (fd >= 0) close(fd);
    }
  }
  NetWork(const NetWork&) = delete;
  NetWork& operator=(const NetWork&) = delete;

  Status Setup() override {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    auto* sa = reinterpret_cast<sockaddr*>(&addr);
    const int type = tcp_ ? SOCK_STREAM : SOCK_DGRAM;
    const int server = socket(AF_INET, type, 0);
    if (server < 0) return SocketError("socket");
    if (bind(server, sa, len) != 0 || getsockname(server, sa, &len) != 0) {
      close(server);
      return SocketError("bind 127.0.0.1");
    }
    tx_fd_ = socket(AF_INET, type, 0);
    if (tx_fd_ < 0) return SocketError("socket");
    if (tcp_) {
      listen_fd_ = server;
      if (listen(listen_fd_, 1) != 0) return SocketError("listen");
      if (connect(tx_fd_, sa, len) != 0) return SocketError("connect 127.0.0.1");
      rx_fd_ = accept(listen_fd_, nullptr, nullptr);
      if (rx_fd_ < 0) return SocketError("accept");
    } else {
      rx_fd_ = server;
      if (connect(tx_fd_, sa, len) != 0) return SocketError("connect 127.0.0.1");
    }
    return Status::Ok();
  }
  void Step(uint64_t& ops, uint64_t& bytes) override {
    for (int i = 0; i < 8; ++i) {
      // Loopback delivers inside send(), so the data is there to read right away.
      const ssize_t sent = send(tx_fd_, buffer_.data(), size_, MSG_DONTWAIT);
      if (sent <= 0) break;
      auto left = static_cast<size_t>(sent);
      while (left > 0) {
        const ssize_t got = recv(rx_fd_, buffer_.data(), left, MSG_DONTWAIT);
        if (got <= 0) break;
        left -= static_cast<size_t>(got);
        if (!tcp_) break;  // One datagram per recv.
      }
      ++ops;
      bytes += static_cast<uint64_t>(sent);
    }
  }

 private:
  bool tcp_;
  size_t size_;
  std::vector<char> buffer_;
  int listen_fd_ = -1;
  int tx_fd_ = -1;
  int rx_fd_ = -1;
};

const LoadOption kNetProto{
    "proto", LoadOption::Kind::kChoice, "protocol over loopback", "udp", 0, 0, {"udp", "tcp"}};
const LoadOption kNetSize{"size", LoadOption::Kind::kWhole, "message size, in bytes", "1024", 1,
                          65000};

}  // namespace

LoadDescriptor NetLoad() {
  return {"net",
          "loopback network: proto= messages of size= bytes over 127.0.0.1 (NET_RX)",
          {kNetProto, kNetSize},
          true,
          &AlwaysSupported,
          nullptr,
          [](const LoadSpec& spec) {
            return MakeWorkerLoad(spec,
                                  [](const LoadParams& p) -> std::unique_ptr<Work> {
                                    return std::make_unique<NetWork>(
                                        TextOption(p, kNetProto) == "tcp",
                                        static_cast<size_t>(WholeOption(p, kNetSize)));
                                  },
                                  {"messages", true, true});
          }};
}

}  // namespace rtpulse::load
