// switch: two threads on the same CPU ping-pong a byte over pipes, so every op is two
// context switches through the scheduler's wake-up path.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "load/builtins.h"
#include "load/worker.h"

namespace rtpulse::load {
namespace {

class SwitchWork final : public Work {
 public:
  ~SwitchWork() override {
    // The worker is killed, never destroyed while running; close for tidiness in tests.
    for (int fd : {ping_[0], ping_[1], pong_[0], pong_[1]}) {
      if (fd >= 0) close(fd);
    }
    if (echo_.joinable()) echo_.detach();
  }
  SwitchWork() = default;
  SwitchWork(const SwitchWork&) = delete;
  SwitchWork& operator=(const SwitchWork&) = delete;

  Status Setup() override {
    if (pipe(ping_) != 0 || pipe(pong_) != 0) {
      return Failure(fmt::format("switch: pipe: {}", std::strerror(errno)));
    }
    // The echo thread inherits the worker's CPU affinity, so both share one CPU.
    echo_ = std::thread([this] {
      char c = 0;
      while (read(ping_[0], &c, 1) == 1) {
        if (write(pong_[1], &c, 1) != 1) break;
      }
    });
    return Status::Ok();
  }
  void Step(uint64_t& ops, uint64_t& /*bytes*/) override {
    for (int i = 0; i < 50; ++i) {
      char c = 'x';
      if (write(ping_[1], &c, 1) != 1 || read(pong_[0], &c, 1) != 1) return;
      ops += 2;
    }
  }

 private:
  int ping_[2] = {-1, -1};
  int pong_[2] = {-1, -1};
  std::thread echo_;
};

}  // namespace

LoadDescriptor SwitchLoad() {
  return {"switch",
          "context switches: pipe ping-pong between two threads on the same CPU",
          {},
          true,
          &AlwaysSupported,
          nullptr,
          [](const LoadSpec& spec) {
            return MakeWorkerLoad(spec,
                                  [](const LoadParams&) -> std::unique_ptr<Work> {
                                    return std::make_unique<SwitchWork>();
                                  },
                                  {"switches", false, true});
          }};
}

}  // namespace rtpulse::load
