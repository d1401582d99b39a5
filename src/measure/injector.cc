#include "measure/injector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "core/clock.h"
#include "measure/probe.h"
#include "measure/rt_setup.h"

namespace rtpulse::measure {

Injector::Injector(int cpu, int priority, int64_t delay_ns, int64_t period_ns, RunShared& shared,
                   std::vector<const Probe*> watched)
    : cpu_(cpu),
      priority_(priority),
      delay_ns_(delay_ns),
      period_ns_(period_ns),
      shared_(shared),
      watched_(std::move(watched)) {}

Injector::~Injector() {
  Join();
}

Status Injector::Start() {
  const int rc = pthread_create(&handle_, nullptr, &Injector::ThreadEntry, this);
  if (rc != 0) return Failure(fmt::format("cannot start injector: {}", std::strerror(rc)));
  started_ = true;
  return Status::Ok();
}

void Injector::Join() {
  if (!started_) return;
  pthread_join(handle_, nullptr);
  started_ = false;
}

void* Injector::ThreadEntry(void* self) {
  static_cast<Injector*>(self)->ThreadMain();
  return nullptr;
}

void Injector::ThreadMain() {
  // A name of its own, so a kernel trace (--explain) tells the blocker from the probes.
  (void)pthread_setname_np(pthread_self(), "rtpulse-inject");
  if (Status s = SetThreadAffinity({cpu_}); !s) problem_ = s.error().message;
  if (Status s = SetThreadScheduling(SchedPolicy::kFifo, priority_); !s)
    problem_ = s.error().message;
  SignalReady(shared_.ready);
  const int64_t origin = AwaitOrigin(shared_.origin_ns);
  auto probes_done = [this] {
    return std::all_of(watched_.begin(), watched_.end(), [](const Probe* p) { return p->done(); });
  };
  for (int64_t k = 1; !shared_.stop.load(std::memory_order_relaxed) && !probes_done(); ++k) {
    const int64_t target = origin + k * period_ns_;
    if (shared_.end_ns > 0 && target >= shared_.end_ns) break;
    const timespec ts = ToTimespec(target);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
    if (shared_.stop.load(std::memory_order_relaxed)) break;
    // Spin from our own wake-up, so the probe sharing this deadline waits at least delay_ns.
    const int64_t until = MonotonicNs() + delay_ns_;
    while (MonotonicNs() < until) {
    }
    injections_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace rtpulse::measure
