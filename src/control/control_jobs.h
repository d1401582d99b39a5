// The control loop's job loop, as a template on its wake source and clock. Included by
// control_loop.cc (the real path: an armed measure::WakeSource and measure::MonotonicClock)
// and by unit tests, which drive the same loop with scripted wake-ups and time
// (tests/control/control_jobs_test.cc), as measure/probe_loop.h does for the probe.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "control/control_loop.h"
#include "measure/wake_source.h"

namespace rtpulse::control {

/// What the job loop needs of the plan, fixed before it starts.
struct JobLoopParams {
  int64_t period_ns = 0;
  int64_t deadline_ns = 0;  ///< Resolved: never 0.
  uint64_t jobs = 0;        ///< 0: until stop or rec.jobs' capacity.
  uint64_t inject_every = 0;
  int64_t inject_ns = 0;
  int64_t first_release_ns = 0;  ///< r_0, a grid point.
};

/// Spins until `clock` passes `until` (the injected extra execution).
template <typename Clock>
inline void SpinInjectedUntil(Clock clock, int64_t until) {
  while (clock.Now() < until) {
  }
}

/// The control loop: jobs from `p.first_release_ns` on `source` and `clock` into `rec`
/// (docs/control.md, "Timing and policies"). No allocation while it runs: rec.jobs must have
/// its capacity reserved, and be empty or already sized to the jobs to run (its content is
/// overwritten); the loop sizes it within that capacity if needed, never beyond, and leaves it
/// holding exactly the jobs it ran (at most the capacity). The real loop sizes it before it
/// computes the first release (ControlThreadMain), so the value-initialisation delays no job.
/// `Source` needs Wait(int64_t) -> measure::WakeResult and RestartsGridOnOverrun(); `Clock` needs
/// Now().
template <typename Source, typename Clock>
void RunControlJobs(const JobLoopParams& p, Source& source, Clock clock, JobBody& body,
                    const std::atomic<bool>& stop, ControlLive* live, ControlRunRecord& rec) {
  const int64_t period = p.period_ns;
  const int64_t deadline = p.deadline_ns;
  // Jobs are written in place: rec.jobs is sized to the jobs to run (value-initialised, within
  // its reserved capacity) unless the caller did so already, and trimmed to the jobs run after
  // the loop. No allocation, and no out-of-line push_back per job.
  const uint64_t capacity = rec.jobs.capacity();
  const uint64_t jobs = p.jobs > 0 ? std::min<uint64_t>(p.jobs, capacity) : capacity;
  if (rec.jobs.size() < jobs) rec.jobs.resize(jobs);
  JobTiming* const slots = rec.jobs.data();  // stable: the vector never reallocates
  // Published before the first job: JobsSoFar() reads the slots below live->jobs.
  if (live != nullptr) live->job_log.store(slots, std::memory_order_release);
  uint64_t done = 0;  // jobs recorded
  const bool restarts_grid = source.RestartsGridOnOverrun();
  const uint64_t every = p.inject_every;
  const int64_t inject_ns = p.inject_ns;
  int64_t next = p.first_release_ns;
  int64_t prev_release = 0;
  // Releases the previous job ran past: the next job's skipped_before, known when its
  // release was computed (recomputed from the releases only after a grid re-anchor).
  uint32_t skip_next = 0;
  uint64_t skipped = 0;
  uint64_t misses = 0;
  int64_t max_response = 0;
  int wait_error = 0;
  bool reanchored = false;
  for (uint64_t k = 0; k < jobs; ++k) {
    if (stop.load(std::memory_order_relaxed)) {
      rec.interrupted = true;
      break;
    }
    measure::WakeResult wake = source.Wait(next);
    int64_t start = clock.Now();
    // A periodic timer whose expiry fell inside the skipped releases returns at once: wait
    // on to the release this job serves.
    while (wake.error == 0 && !restarts_grid && start < next &&
           !stop.load(std::memory_order_relaxed)) {
      wake = source.Wait(next);
      start = clock.Now();
    }
    if (wake.error != 0) {
      wait_error = wake.error;  // reported after the loop (a message allocates)
      break;
    }
    if (stop.load(std::memory_order_relaxed)) {
      rec.interrupted = true;  // the wake-up may be the Interrupt(), not a release
      break;
    }
    if (restarts_grid && start < next) {
      // SCHED_DEADLINE after an overrun: the kernel restarted its period at a time we
      // cannot see; the wake-up proves it did. Re-anchor the grid on it (counted).
      ++rec.grid_restarts;
      next = start;
      reanchored = true;
    }
    const int64_t release = next;
    const bool release_unknown = reanchored;
    reanchored = false;
    body.Run(k);
    if (every > 0 && k % every == every - 1) SpinInjectedUntil(clock, clock.Now() + inject_ns);
    const int64_t end = clock.Now();
    const int64_t response = end - release;
    const uint32_t skipped_before =
        k == 0 || !release_unknown
            ? skip_next
            : static_cast<uint32_t>(std::max<int64_t>(0, (release - prev_release) / period - 1));
    const bool miss = response > deadline;
    JobTiming& job = slots[k];
    job.release_ns = release;
    job.start_ns = start;
    job.end_ns = end;
    job.skipped_before = skipped_before;
    job.miss = miss;
    job.release_unknown = release_unknown;
    ++done;
    skipped += skipped_before;
    misses += miss ? 1 : 0;
    // A restarted period's "response" is the execution alone: not a response, not counted.
    if (!release_unknown) max_response = std::max(max_response, response);
    prev_release = release;
    // The next release is the first grid point at or after this job's completion: releases
    // the job ran past (grid points strictly before its end) are skipped and counted in the
    // next job's skipped_before. A job ending exactly on a grid point has not run past it
    // (as c = r + deadline is no miss), so the next job serves it. Most jobs end within
    // their period, which needs no division.
    next = release + period;
    skip_next = 0;
    if (response > period) {
      const int64_t passed = (response - 1) / period;
      next += period * passed;
      skip_next = static_cast<uint32_t>(passed);
    }
    if (live != nullptr) {
      live->skipped.store(skipped, std::memory_order_relaxed);
      live->misses.store(misses, std::memory_order_relaxed);
      live->max_response_ns.store(max_response, std::memory_order_relaxed);
      // Last, with release: slot k is written and never written again (JobsSoFar).
      live->jobs.store(k + 1, std::memory_order_release);
    }
  }
  rec.jobs.resize(done);  // drops the slots no job filled
  if (wait_error != 0) {
    rec.degraded = true;
    rec.warnings.push_back(fmt::format("wait failed: {}; the run stopped after {} jobs",
                                       std::strerror(wait_error), rec.jobs.size()));
  }
  // The releases the last job ran past: no next job counts them in its skipped_before.
  rec.skipped_after_last = done > 0 ? skip_next : 0;
  rec.skipped = skipped + rec.skipped_after_last;
  rec.misses = misses;
  rec.releases = rec.jobs.size() + rec.skipped;
  if (live != nullptr) live->skipped.store(rec.skipped, std::memory_order_relaxed);
}

}  // namespace rtpulse::control
