#include "measure/wake_source.h"

#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <thread>

#include "core/clock.h"

namespace rtpulse::measure {
namespace {

itimerspec PeriodicSpec(int64_t first_ns, int64_t interval_ns) {
  itimerspec spec{};
  spec.it_value = ToTimespec(first_ns);
  spec.it_interval = ToTimespec(interval_ns);
  return spec;
}

Status ErrnoStatus(const char* what) {
  return Failure(fmt::format("{} failed: {}", what, std::strerror(errno)));
}

/// cyclictest -c: a clock to sleep on, mapped onto the engine's CLOCK_MONOTONIC deadlines
/// through the offset between the two, taken at Anchor() and again after every wake-up. When
/// the clock moves against CLOCK_MONOTONIC (CLOCK_REALTIME stepped, CLOCK_BOOTTIME after a
/// suspend, an auxiliary clock steered on its own), the latency is still the clock's and the
/// grid stays the clock's, as in cyclictest: Expected() moves the deadline by the offset's
/// change, and the engine's next deadline follows from it.
class ClockMap {
 public:
  void Anchor(clockid_t clock) {
    clock_ = clock;
    offset_ns_ = clock == CLOCK_MONOTONIC ? 0 : Offset();
  }
  clockid_t clock() const { return clock_; }
  /// `monotonic_ns` on the clock, by the offset last taken.
  int64_t ToClock(int64_t monotonic_ns) const { return monotonic_ns + offset_ns_; }
  /// After the wake-up for `deadline_ns` (slept for until ToClock(deadline_ns)): the
  /// CLOCK_MONOTONIC deadline whose latency is the one on the clock. Takes the offset again.
  int64_t Expected(int64_t deadline_ns) {
    if (clock_ == CLOCK_MONOTONIC) return deadline_ns;
    const int64_t now_offset = Offset();
    const int64_t expected = deadline_ns - (now_offset - offset_ns_);
    offset_ns_ = now_offset;
    return expected;
  }

 private:
  int64_t Offset() const {
    // The clock read between two CLOCK_MONOTONIC reads, set against their middle. A host
    // stall inside the window moves the middle by half the stall (CI saw deadlines off by
    // 0.5 ms after 1 ms stalls): a wide window is read again, and the narrowest of up to
    // four reads is kept.
    int64_t best = 0;
    int64_t best_window = INT64_MAX;
    for (int attempt = 0; attempt < 4; ++attempt) {
      const int64_t before = MonotonicNs();
      const int64_t on_clock = ClockNs(clock_);
      const int64_t after = MonotonicNs();
      if (after - before < best_window) {
        best_window = after - before;
        best = on_clock - (before + best_window / 2);
      }
      if (best_window <= 2'000) break;
    }
    return best;
  }
  clockid_t clock_ = CLOCK_MONOTONIC;
  int64_t offset_ns_ = 0;
};

/// Absolute clock_nanosleep on another clock than CLOCK_MONOTONIC (cyclictest -c); AbsSleep
/// is the CLOCK_MONOTONIC one.
class AbsSleepOnClock final : public WakeSource {
 public:
  Status Arm(const WakeParams& params) override {
    map_.Anchor(params.clock);
    return Status::Ok();
  }
  WakeResult Wait(int64_t deadline_ns) override {
    const timespec ts = ToTimespec(map_.ToClock(deadline_ns));
    int rc;
    while ((rc = clock_nanosleep(map_.clock(), TIMER_ABSTIME, &ts, nullptr)) == EINTR) {
    }
    return {map_.Expected(deadline_ns), 0, rc};
  }

 private:
  ClockMap map_;
};

/// Relative clock_nanosleep (cyclictest -r): the deadline is "now + interval" when the
/// probe goes to sleep, so the schedule drifts by each activation's own latency.
class RelSleep final : public WakeSource {
 public:
  Status Arm(const WakeParams& params) override {
    interval_ = ToTimespec(params.interval_ns);
    interval_ns_ = params.interval_ns;
    clock_ = params.clock;
    return Status::Ok();
  }
  WakeResult Wait(int64_t) override {
    // A relative sleep is the same interval on every clock: the latency is CLOCK_MONOTONIC's.
    const int64_t before = MonotonicNs();
    timespec remaining{};
    timespec request = interval_;
    int rc;
    while ((rc = clock_nanosleep(clock_, 0, &request, &remaining)) == EINTR) {
      request = remaining;
    }
    return {before + interval_ns_, 0, rc};
  }

 private:
  timespec interval_{};
  int64_t interval_ns_ = 0;
  clockid_t clock_ = CLOCK_MONOTONIC;
};

/// Periodic timerfd: its hrtimer is not marked hard, so PREEMPT_RT expires it from the
/// ktimers softirq thread. read() returns the expiration count (missed periods).
class TimerFd final : public WakeSource {
 public:
  ~TimerFd() override { Disarm(); }
  Status Arm(const WakeParams& params) override {
    fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (fd_ < 0) return ErrnoStatus("timerfd_create");
    interval_ns_ = params.interval_ns;
    next_ns_ = params.start_ns + params.interval_ns;
    const itimerspec spec = PeriodicSpec(next_ns_, interval_ns_);
    if (timerfd_settime(fd_, TFD_TIMER_ABSTIME, &spec, nullptr) != 0) {
      return ErrnoStatus("timerfd_settime");
    }
    return Status::Ok();
  }
  WakeResult Wait(int64_t) override {
    uint64_t expirations = 0;
    ssize_t n;
    while ((n = read(fd_, &expirations, sizeof(expirations))) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof(expirations))) return {next_ns_, 0, errno};
    const int64_t expected = next_ns_;
    next_ns_ += static_cast<int64_t>(expirations) * interval_ns_;
    return {expected, expirations, 0};
  }
  void Disarm() override {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  int64_t interval_ns_ = 0;
  int64_t next_ns_ = 0;
};

/// POSIX timer delivering a real-time signal to this thread (SIGEV_THREAD_ID), taken with
/// sigwaitinfo(); si_overrun counts the missed expirations. cyclictest -x.
class PosixTimer final : public WakeSource {
 public:
  ~PosixTimer() override { Disarm(); }
  Status Arm(const WakeParams& params) override {
    sigevent event{};
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = PosixTimerSignal();
    event._sigev_un._tid = gettid();
    if (timer_create(params.clock, &event, &timer_) != 0) return ErrnoStatus("timer_create");
    armed_ = true;
    map_.Anchor(params.clock);
    sigemptyset(&set_);
    sigaddset(&set_, PosixTimerSignal());
    interval_ns_ = params.interval_ns;
    next_ns_ = params.start_ns + params.interval_ns;
    const itimerspec spec = PeriodicSpec(map_.ToClock(next_ns_), interval_ns_);
    if (timer_settime(timer_, TIMER_ABSTIME, &spec, nullptr) != 0) {
      return ErrnoStatus("timer_settime");
    }
    return Status::Ok();
  }
  WakeResult Wait(int64_t) override {
    siginfo_t info{};
    int rc;
    while ((rc = sigwaitinfo(&set_, &info)) < 0 && errno == EINTR) {
    }
    if (rc < 0) return {next_ns_, 0, errno};
    const uint64_t expirations = 1 + static_cast<uint64_t>(info.si_overrun);
    const int64_t expected = map_.Expected(next_ns_);
    next_ns_ = expected + static_cast<int64_t>(expirations) * interval_ns_;
    return {expected, expirations, 0};
  }
  void Disarm() override {
    if (armed_) timer_delete(timer_);
    armed_ = false;
  }

 private:
  ClockMap map_;
  timer_t timer_{};
  bool armed_ = false;
  sigset_t set_{};
  int64_t interval_ns_ = 0;
  int64_t next_ns_ = 0;
};

/// setitimer(ITIMER_REAL): one per process, so only one probe thread may use it. SIGALRM
/// does not queue and the kernel re-arms the timer only when the signal is dequeued
/// (hrtimer_forward past "now"), so which periods were skipped is decided at dequeue time,
/// not when the probe reads the clock. getitimer() after each wake-up gives the kernel's
/// next expiry, from which the expirations are counted exactly.
class ITimer final : public WakeSource {
 public:
  ~ITimer() override { Disarm(); }
  Status Arm(const WakeParams& params) override {
    sigemptyset(&set_);
    sigaddset(&set_, SIGALRM);
    // ITIMER_REAL is relative: start it exactly at the grid origin so its expiries line
    // up with the deadlines the engine computes.
    const timespec origin = ToTimespec(params.start_ns);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &origin, nullptr) == EINTR) {
    }
    itimerval value{};
    value.it_value.tv_sec = params.interval_ns / kNsPerSec;
    value.it_value.tv_usec = (params.interval_ns % kNsPerSec) / kNsPerUs;
    value.it_interval = value.it_value;
    interval_ns_ = params.interval_ns;
    // ITIMER_REAL counts from the call, not from the origin: anchor the grid on the clock
    // read just before it (at or before the kernel's start, so latency is never understated).
    anchor_ns_ = MonotonicNs();
    if (setitimer(ITIMER_REAL, &value, nullptr) != 0) return ErrnoStatus("setitimer");
    armed_ = true;
    return Status::Ok();
  }
  WakeResult Wait(int64_t deadline_ns) override {
    siginfo_t info{};
    int rc;
    while ((rc = sigwaitinfo(&set_, &info)) < 0 && errno == EINTR) {
    }
    if (rc < 0) return {deadline_ns, 0, errno};
    const int64_t woke = MonotonicNs();
    // Read the timer between two clock reads; a host stall between them (seen as a gap of
    // a quarter period or more) makes the reading ambiguous, so read it again.
    itimerval left{};
    int64_t before = 0;
    int64_t after = 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
      before = MonotonicNs();
      getitimer(ITIMER_REAL, &left);
      after = MonotonicNs();
      if (after - before < interval_ns_ / 4) break;
    }
    const int64_t left_ns = left.it_value.tv_sec * kNsPerSec + left.it_value.tv_usec * kNsPerUs;
    int64_t periods = 0;
    if (left_ns > kNsPerUs) {
      // Armed: the kernel's next expiry is a grid point; round away the few hundred ns
      // the getitimer() call takes.
      periods = (before + left_ns - deadline_ns + interval_ns_ / 2) / interval_ns_;
    } else {
      // Expired again and not re-armed yet (the kernel reports 0 or 1 us): its signal is
      // pending for the first grid point after the dequeue of this one (at or before
      // `woke`), and that point has passed (at or before `after`).
      const int64_t first_after_wake = (woke - deadline_ns) / interval_ns_ + 1;
      const int64_t last_passed = (after - deadline_ns) / interval_ns_;
      periods = std::min(first_after_wake, last_passed);
    }
    return {deadline_ns, static_cast<uint64_t>(std::max<int64_t>(1, periods)), 0};
  }
  void Disarm() override {
    if (!armed_) return;
    itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
    armed_ = false;
  }
  int64_t GridOrigin(int64_t) const override { return anchor_ns_; }
  const char* note() const override {
    return "itimer: grid anchored at the clock read just before setitimer(); the kernel's "
           "expiries can trail it by that call's duration";
  }

 private:
  sigset_t set_{};
  bool armed_ = false;
  int64_t anchor_ns_ = 0;
  int64_t interval_ns_ = 0;
};

/// epoll_pwait2() with a nanosecond timeout on an empty set: the event-loop wait most
/// applications use (schedule_hrtimeout_range: hard expiry for RT tasks on RT).
class EpollWait final : public WakeSource {
 public:
  ~EpollWait() override { Disarm(); }
  Status Arm(const WakeParams&) override {
    fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (fd_ < 0) return ErrnoStatus("epoll_create1");
    return Status::Ok();
  }
  WakeResult Wait(int64_t deadline_ns) override {
    epoll_event event{};
    for (;;) {
      const int64_t left = deadline_ns - MonotonicNs();
      if (left <= 0) return {deadline_ns, 0, 0};
      const timespec timeout = ToTimespec(left);
      const int rc = epoll_pwait2(fd_, &event, 1, &timeout, nullptr);
      if (rc < 0 && errno != EINTR) return {deadline_ns, 0, errno};
      if (rc == 0) return {deadline_ns, 0, 0};
    }
  }
  void Disarm() override {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

/// Spins on clock_gettime until the deadline: no timer, no wake-up, the measurement floor.
class BusyWait final : public WakeSource {
 public:
  Status Arm(const WakeParams&) override { return Status::Ok(); }
  WakeResult Wait(int64_t deadline_ns) override {
    while (MonotonicNs() < deadline_ns) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield" ::: "memory");
#endif
    }
    return {deadline_ns, 0, 0};
  }
};

/// SCHED_DEADLINE: the thread yields its remaining runtime and the kernel's replenishment
/// timer (hard-irq on RT) wakes it at the next period. The grid is anchored on the clock
/// read just before sched_setattr(), so latencies are never understated.
class DeadlineWait final : public WakeSource {
 public:
  Status Arm(const WakeParams& params) override {
    interval_ns_ = params.interval_ns;
    // Start the first period at the shared grid origin, like the other paths.
    const timespec origin = ToTimespec(params.start_ns);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &origin, nullptr) == EINTR) {
    }
    // The kernel starts the first period inside sched_setattr(); reading the clock before
    // the call puts our origin at or before the kernel's, so latency is never understated.
    const int64_t before = MonotonicNs();
    if (Status s = SetThreadDeadline(
            params.deadline_runtime_ns,
            params.deadline_relative_ns > 0 ? params.deadline_relative_ns : params.interval_ns,
            params.interval_ns, params.deadline_flags);
        !s) {
      return s;
    }
    anchor_ns_ = before;
    return Status::Ok();
  }
  WakeResult Wait(int64_t deadline_ns) override {
    const int rc = sched_yield();
    return {deadline_ns, 0, rc != 0 ? errno : 0};
  }
  int64_t GridOrigin(int64_t) const override { return anchor_ns_; }
  bool RestartsGridOnOverrun() const override { return true; }
  const char* note() const override {
    return "deadline: grid anchored at the clock read before sched_setattr(); after an overrun "
           "the kernel may restart its period, so rtpulse re-anchors on the next wake-up and "
           "counts it in grid_restarts without a latency (later samples may read low by at "
           "most that wake-up's own latency); the periods that passed before it count as "
           "skipped";
  }

 private:
  int64_t interval_ns_ = 0;
  int64_t anchor_ns_ = 0;
};

/// A waker thread on the same CPU and priority sleeps to each deadline (absolute
/// clock_nanosleep) and posts an eventfd; the probe blocks in read(). This is the chain
/// an interrupt thread or driver thread waking an application thread goes through.
class CrossThread final : public WakeSource {
 public:
  ~CrossThread() override { Disarm(); }
  Status Arm(const WakeParams& params) override {
    fd_ = eventfd(0, EFD_CLOEXEC);
    if (fd_ < 0) return ErrnoStatus("eventfd");
    interval_ns_ = params.interval_ns;
    next_ns_ = params.start_ns + params.interval_ns;
    outer_stop_ = params.stop;
    waker_ = std::thread([this, params] { WakerLoop(params); });
    // Its tid is part of the probe (--explain traces its syscalls): wait until it is known.
    waker_tid_.wait(0, std::memory_order_acquire);
    return Status::Ok();
  }
  int HelperTid() const override { return waker_tid_.load(std::memory_order_acquire); }
  WakeResult Wait(int64_t) override {
    uint64_t posts = 0;
    ssize_t n;
    while ((n = read(fd_, &posts, sizeof(posts))) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof(posts))) return {next_ns_, 0, errno};
    const int64_t expected = next_ns_;
    next_ns_ += static_cast<int64_t>(posts) * interval_ns_;
    return {expected, posts, 0};
  }
  void Disarm() override {
    done_.store(true, std::memory_order_relaxed);
    if (waker_.joinable()) waker_.join();
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  const char* note() const override { return waker_note_; }

 private:
  bool Stopping() const {
    return done_.load(std::memory_order_relaxed) ||
           (outer_stop_ != nullptr && outer_stop_->load(std::memory_order_relaxed));
  }
  void WakerLoop(const WakeParams& params) {
    waker_tid_.store(static_cast<int>(gettid()), std::memory_order_release);
    waker_tid_.notify_all();
    if (params.cpu >= 0) (void)SetThreadAffinity({params.cpu});
    if (!SetThreadScheduling(params.policy, params.priority)) {
      waker_note_ = "xthread: the waker could not get the probe's policy/priority";
    }
    int64_t deadline = params.start_ns + params.interval_ns;
    const uint64_t one = 1;
    while (!Stopping()) {
      const timespec ts = ToTimespec(deadline);
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
      }
      // Posting after stop too: it unblocks a probe waiting in read().
      if (write(fd_, &one, sizeof(one)) < 0) break;
      deadline += params.interval_ns;
    }
  }

  int fd_ = -1;
  int64_t interval_ns_ = 0;
  int64_t next_ns_ = 0;
  const std::atomic<bool>* outer_stop_ = nullptr;
  std::atomic<bool> done_{false};
  std::thread waker_;
  std::atomic<int> waker_tid_{0};
  const char* waker_note_ = nullptr;
};

}  // namespace

int PosixTimerSignal() {
  return SIGRTMIN + 2;
}

std::unique_ptr<WakeSource> MakeWakeSource(WakePath path, clockid_t clock) {
  switch (path) {
    case WakePath::kAbs:
      if (clock != CLOCK_MONOTONIC) return std::make_unique<AbsSleepOnClock>();
      return std::make_unique<AbsSleep>();
    case WakePath::kRel:
      return std::make_unique<RelSleep>();
    case WakePath::kTimerfd:
      return std::make_unique<TimerFd>();
    case WakePath::kPosix:
      return std::make_unique<PosixTimer>();
    case WakePath::kItimer:
      return std::make_unique<ITimer>();
    case WakePath::kEpoll:
      return std::make_unique<EpollWait>();
    case WakePath::kBusy:
      return std::make_unique<BusyWait>();
    case WakePath::kDeadline:
      return std::make_unique<DeadlineWait>();
    case WakePath::kXthread:
      return std::make_unique<CrossThread>();
    case WakePath::kGpio:
      return MakeGpioWakeSource();
  }
  return nullptr;
}

}  // namespace rtpulse::measure
