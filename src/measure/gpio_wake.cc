// The gpio wake path (docs/wake-paths.md "gpio"): the probe blocks on a GPIO input line's
// edge-event file descriptor; each edge's kernel timestamp (taken in the line's interrupt
// handler) is the sample's expected time, so the latency is interrupt -> thread running on
// a real device line. With a drive line, a separate thread toggles an output at the
// interval (a wire from that pin to the input makes the edges); without it the edges come
// from outside and the interval is only their expected rate.
#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

#include "core/clock.h"
#include "measure/gpio.h"
#include "measure/wake_source.h"

namespace rtpulse::measure {
namespace {

/// Longest single poll: the stop flag is looked at least this often.
constexpr int64_t kGpioWakePollNs = 100 * kNsPerMs;

class GpioWake final : public WakeSource {
 public:
  ~GpioWake() override {
    Disarm();
    if (interrupt_fd_ >= 0) close(interrupt_fd_);
  }

  Status Arm(const WakeParams& params) override {
    auto spec = ParseGpioLine(params.gpio_line);
    if (!spec) return spec.error();
    auto input = GpioEdgeInput::Open(*spec, "rtpulse-latency", GpioEdges::kBoth);
    if (!input) return input.error();
    input_ = std::move(*input);
    stop_ = params.stop;
    end_ns_ = params.end_ns;
    interrupt_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (interrupt_fd_ < 0) return Failure(fmt::format("eventfd failed: {}", strerror(errno)));
    if (!params.gpio_drive.empty()) {
      auto drive_spec = ParseGpioLine(params.gpio_drive);
      if (!drive_spec) return drive_spec.error();
      auto output = GpioOutput::Open(*drive_spec, "rtpulse-latency-drive", false);
      if (!output) return output.error();
      output_ = std::move(*output);
      driver_ = std::thread([this, params] { DriveLoop(params); });
      driver_tid_.wait(0, std::memory_order_acquire);
    }
    return Status::Ok();
  }
  int HelperTid() const override { return driver_tid_.load(std::memory_order_acquire); }

  WakeResult Wait(int64_t deadline_ns) override {
    pollfd fds[2] = {{input_->fd(), POLLIN, 0}, {interrupt_fd_, POLLIN, 0}};
    for (;;) {
      if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) return Ended(deadline_ns);
      int64_t wait_ns = kGpioWakePollNs;
      if (end_ns_ > 0) {
        const int64_t left = end_ns_ - MonotonicNs();
        if (left <= 0) return Ended(deadline_ns);
        wait_ns = std::min(wait_ns, left);
      }
      const timespec timeout = ToTimespec(wait_ns);
      const int rc = ppoll(fds, 2, &timeout, nullptr);
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0) return {deadline_ns, 0, errno};
      if (rc == 0) continue;
      if ((fds[1].revents & POLLIN) != 0) return Ended(deadline_ns);
      if ((fds[0].revents & POLLIN) == 0) continue;
      auto edge = input_->Read();
      if (!edge) {
        read_error_ = edge.error().message;
        return {deadline_ns, 0, EPROTO};
      }
      ++edges_;
      // One edge, one sample, latency from its own timestamp: edges queued while the thread
      // was late are served by the next waits, each as late as it really was.
      return {edge->kernel_ns, 1, 0};
    }
  }

  void Interrupt() override {
    const uint64_t one = 1;
    if (interrupt_fd_ >= 0) (void)!write(interrupt_fd_, &one, sizeof(one));
  }

  void Disarm() override {
    done_.store(true, std::memory_order_relaxed);
    if (driver_.joinable()) driver_.join();
    output_.reset();
    input_.reset();
    // The interrupt eventfd stays open until the destructor (after the probe is joined): the
    // controlling thread may still post to it.
  }

  const char* note() const override {
    return output_ != nullptr
               ? "gpio: every edge of the input line is one sample, latency = thread running - "
                 "the kernel's edge timestamp; a driver thread toggles the drive line at the "
                 "interval (edges lost to the kernel's 16-event queue show as driven minus seen)"
               : "gpio: every edge of the input line is one sample, latency = thread running - "
                 "the kernel's edge timestamp; the edges come from outside, so the interval is "
                 "only their expected rate: periods and misses are not counted (a full kernel "
                 "event queue drops edges unseen with the v1 GPIO interface)";
  }

  std::string EndNote(bool& problem) const override {
    problem = !read_error_.empty();
    std::string out = read_error_;
    if (output_ != nullptr || driven_.load() > 0) {
      const uint64_t driven = driven_.load();
      const uint64_t seen = edges_;
      // With -l instead of -D the probe may stop while the last edge is on its way.
      const uint64_t slack = end_ns_ > 0 ? 0 : 1;
      const bool missing = seen + slack < driven;
      if (missing) problem = true;
      out +=
          fmt::format("{}gpio: {} edges driven, {} seen{}", out.empty() ? "" : "; ", driven, seen,
                      missing ? " (edges missing: is the wire between the drive and input "
                                "pins? is it slower than the interval?)"
                              : "");
    }
    return out;
  }

 private:
  WakeResult Ended(int64_t deadline_ns) const {
    WakeResult r{deadline_ns, 0, 0};
    r.ended = true;
    return r;
  }

  bool Stopping() const {
    return done_.load(std::memory_order_relaxed) ||
           (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) ||
           (end_ns_ > 0 && MonotonicNs() >= end_ns_);
  }

  void DriveLoop(const WakeParams& params) {
    driver_tid_.store(static_cast<int>(gettid()), std::memory_order_release);
    driver_tid_.notify_all();
    // The driver runs at the probe's policy and priority on any CPU: it makes the edges,
    // it is not measured.
    (void)SetThreadScheduling(params.policy, params.priority);
    int64_t next = params.start_ns + params.interval_ns;
    // With -D, the last toggle is one interval before the end, so every edge driven has an
    // interval to cross the wire and reach the probe: driven and seen then must agree.
    const int64_t last_ns = params.end_ns > 0 ? params.end_ns - params.interval_ns : INT64_MAX;
    bool level = false;
    while (!Stopping() && next <= last_ns) {
      const timespec ts = ToTimespec(next);
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
      }
      if (Stopping()) break;
      level = !level;
      if (!output_->Set(level)) break;
      driven_.fetch_add(1, std::memory_order_relaxed);
      next += params.interval_ns;
    }
  }

  std::unique_ptr<GpioEdgeInput> input_;
  std::unique_ptr<GpioOutput> output_;
  const std::atomic<bool>* stop_ = nullptr;
  int64_t end_ns_ = 0;
  int interrupt_fd_ = -1;
  uint64_t edges_ = 0;
  std::atomic<uint64_t> driven_{0};
  std::atomic<bool> done_{false};
  std::thread driver_;
  std::atomic<int> driver_tid_{0};
  std::string read_error_;
};

}  // namespace

std::unique_ptr<WakeSource> MakeGpioWakeSource() {
  return std::make_unique<GpioWake>();
}

}  // namespace rtpulse::measure
