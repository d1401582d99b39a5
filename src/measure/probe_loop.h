// The probe's measurement loop, as templates on its wake source and clock. Included by
// probe.cc (the real path: an armed WakeSource and MonotonicClock) and by unit tests, which
// drive the same loop with scripted wake-ups and time (tests/measure/probe_loop_test.cc).
// Not for other code: everything here is Probe's private machinery.
#pragma once

#include <sched.h>

#include <cstdint>

#include "measure/probe.h"

namespace rtpulse::measure {

template <typename Source, typename Clock>
void Probe::RunLoop(Source& source, Clock clock) {
  const bool extras = result_.linear.has_value() || plan_.spike_ns > 0 || ring_ != nullptr ||
                      plan_.breaktrace_ns > 0 || source.RestartsGridOnOverrun() ||
                      inject_period_ns_ > 0;
  EnterLoop();
  extras ? LoopImpl<true>(source, clock) : LoopImpl<false>(source, clock);
  LeaveLoop();
}

inline void Probe::RecordLinear(int64_t latency_ns, uint64_t cycle) {
  LinearHistogramRecord& linear = *result_.linear;
  if (latency_ns < 0) {
    ++linear.underflows;
    return;
  }
  const int64_t us = latency_ns / kNsPerUs;
  if (us < linear.limit_us) {
    ++linear.counts[static_cast<size_t>(us)];
    return;
  }
  ++linear.overflows;
  if (linear.overflow_seqs.size() < linear.overflow_seqs.capacity()) {
    linear.overflow_seqs.push_back(cycle);  // within reserved capacity: no allocation
  } else {
    ++linear.overflow_seqs_dropped;
  }
}

inline void Probe::RecordSpike(uint64_t seq, int64_t expected_ns, int64_t latency_ns) {
  if (result_.spikes.size() < result_.spikes.capacity()) {
    result_.spikes.push_back({seq, expected_ns, latency_ns});  // reserved: no allocation
  } else {
    ++result_.spikes_not_kept;
  }
}

template <bool kExtras, typename Source, typename Clock>
void Probe::LoopImpl(Source& source, Clock clock) {
  const int64_t interval = thread_.interval_ns;
  const int64_t end_ns = shared_.end_ns > 0 ? shared_.end_ns : INT64_MAX;
  const uint64_t loops = plan_.loops > 0 ? plan_.loops : UINT64_MAX;
  const bool restarts_grid = source.RestartsGridOnOverrun();
  const int64_t spike_ns = plan_.spike_ns;
  const int64_t break_ns = plan_.breaktrace_ns;
  const uint16_t cpu_field =
      result_.cpu >= 0 ? static_cast<uint16_t>(result_.cpu) : uint16_t{0xFFFF};
  Histogram& histogram = result_.histogram;
  Histogram& skipped_histogram = result_.skipped_histogram;
  const int64_t origin = shared_.origin_ns.load(std::memory_order_relaxed);
  int64_t next = source.GridOrigin(origin + thread_.phase_ns) + interval;
  const int64_t inject_period = inject_period_ns_;
  const int64_t inject_delay = inject_delay_ns_;
  uint64_t seq = 0;
  uint64_t cycles = 0;
  bool resync = false;
  int64_t last_wake = 0;  // published once, after the loop: only read after Join()

  // Stop is checked once per activation, after the wake-up (a stop asked for meanwhile
  // ends the loop at the next one, within a period), and once before the first wait.
  if (shared_.stop.load(std::memory_order_relaxed)) {
    result_.periods_elapsed = 0;
    return;
  }
  for (;;) {
    const WakeResult wake = source.Wait(next);
    const int64_t now = clock.Now();
    if (wake.ended) break;
    if (wake.error != 0) {
      wait_error_ = wake.error;
      break;
    }
    // An activation that arrives after stop was asked for may be the unblocking post, not a
    // real period: it is not recorded.
    if (shared_.stop.load(std::memory_order_relaxed)) break;

    last_wake = now;
    const int64_t latency = now - wake.expected_ns;
    const uint64_t skipped =
        wake.expirations > 0
            ? wake.expirations - 1
            : (latency >= interval ? static_cast<uint64_t>(latency / interval) : 0);
    // Per period: a late wake-up serves the deadline `wake.expected_ns`; the skipped
    // deadlines after it (d + T, ..., d + kT) were each as late as the time from them to
    // this wake-up. Only stalls pay for this, one O(1) record per period they swallowed.
    auto count_skipped = [&] {
      missed_.store(missed_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      skipped_.store(skipped_.load(std::memory_order_relaxed) + skipped, std::memory_order_relaxed);
      int64_t lateness = latency;
      for (uint64_t j = 0; j < skipped; ++j) {
        lateness -= interval;
        skipped_histogram.Record(lateness);
      }
    };
    if (kExtras && restarts_grid && (resync || latency < 0)) {
      // SCHED_DEADLINE: after an overrun the kernel may have restarted its period (CBS)
      // where we cannot see it; a wake-up before our grid proves it did. The activation
      // that follows is where the kernel's grid shows again: re-anchor on it, count it in
      // grid_restarts, and record no latency for it rather than an invented one. The periods
      // of our grid that passed before it without an activation (the kernel postpones a
      // period that overran its runtime: a host stall while the thread ran can cost tens of
      // them) are missed periods like any other, counted as skipped with their lateness.
      grid_restarts_.store(grid_restarts_.load(std::memory_order_relaxed) + 1,
                           std::memory_order_relaxed);
      if (skipped > 0) count_skipped();
      resync = false;
      seq += 1 + skipped;
      next = now + interval;
      if (cycles >= loops || now >= end_ns) break;
      continue;
    }
    histogram.Record(latency);
    cur_ns_.store(latency, std::memory_order_relaxed);
    if (skipped > 0) count_skipped();
    if constexpr (kExtras) {
      if (result_.linear) RecordLinear(latency, cycles);
      if (spike_ns > 0 && latency > spike_ns) RecordSpike(seq, wake.expected_ns, latency);
      // The injector spins from origin + k * period (k >= 1): a deadline inside a spin.
      if (inject_period > 0 && wake.expected_ns > origin &&
          (wake.expected_ns - origin) % inject_period < inject_delay) {
        result_.injected_histogram->Record(latency);
      }
      if (ring_ != nullptr) {
        SampleRecord record{};
        record.seq = seq;
        record.expected_ns = wake.expected_ns;
        record.actual_ns = now;
        record.thread = static_cast<uint16_t>(thread_.index);
        // Unpinned probes record where this sample ran (sched_getcpu reads glibc's rseq
        // area: no system call).
        record.cpu = cpu_field != 0xFFFF ? cpu_field : static_cast<uint16_t>(sched_getcpu());
        record.wake_path = static_cast<uint8_t>(path_);
        record.flags = skipped > 0 ? SampleRecord::kMissed : uint8_t{0};
        ring_->Push(record);
      }
    }
    ++cycles;
    seq += 1 + skipped;
    if constexpr (kExtras) {
      if (break_ns > 0 && latency > break_ns) {
        bool expected = false;
        if (shared_.break_hit.compare_exchange_strong(expected, true)) {
          shared_.break_thread.store(thread_.index);
          shared_.break_latency_ns.store(latency);
          shared_.break_seq.store(seq - 1 - skipped);
          const bool traced = tracer_ != nullptr &&
                              tracer_->Break(thread_.index, latency, break_ns, plan_.tracemark);
          shared_.break_traced.store(traced);
        }
        shared_.stop.store(true, std::memory_order_relaxed);
        break;
      }
      if (restarts_grid && skipped > 0) resync = true;
    }
    next = wake.expected_ns + static_cast<int64_t>(1 + skipped) * interval;
    if (cycles >= loops || now >= end_ns) break;
  }
  last_wake_ns_.store(last_wake, std::memory_order_relaxed);
  result_.periods_elapsed = seq;
}

}  // namespace rtpulse::measure
