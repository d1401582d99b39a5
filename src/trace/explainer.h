// --explain: watches a run's samples, and for every one later than the threshold cuts the
// window from its deadline to its wake-up out of the running trace (session.h), attributes
// it (attribution.h), saves the raw window as ftrace text and reports the verdict, while the
// measurement keeps running (docs/explain.md). Runs its own non-RT analysis thread; the
// probes never wait for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/samples_file.h"
#include "trace/attribution.h"
#include "trace/session.h"

namespace rtpulse::trace {

struct ExplainPlan {
  int64_t threshold_ns = 0;  ///< --explain US: samples above it are explained.
  /// Raw windows are written here as spike-NNNNN-cpuC.txt (created when the first one is);
  /// "" = not saved.
  std::string window_dir;
  size_t max_explained = 1000;  ///< Further spikes are counted, not explained.
  /// The saved window starts this long before the deadline and ends this long after the
  /// wake-up; the attribution reads up to the same end (the first event after the clock
  /// read is an observation of who runs). Default: history_ns, so a saved window alone gives
  /// the same answer as the live attribution (explain_truth.py checks it).
  int64_t margin_ns = 10'000'000;
  /// The cost measurement: for this long from the first sample, recording is off (the
  /// trace costs nothing), then on; the p50/p99 of each phase are compared in the notes.
  /// 0 = no cost phase (the trace records from the start).
  int64_t cost_phase_ns = 0;
  /// Events before the deadline that a window also takes, for the context the window opens
  /// in (the probe's hrtimer_start, the thread that was running).
  int64_t history_ns = 10'000'000;
  /// How long the analysis thread waits for the trace to show an event past a spike's
  /// wake-up on its CPU before it explains with what it has (an idle CPU has no newer event).
  int64_t flush_wait_ns = 200'000'000;
  /// Finish()'s bound for what is still queued; spikes left when it runs out are counted as
  /// not explained, with a note.
  int64_t finish_budget_ns = 3'000'000'000;
  /// CLOCK_MONOTONIC, for explained_after_ns and the instant recording is turned on; tests
  /// inject a fake. Empty = the real clock.
  std::function<int64_t()> now_ns;
  /// The kernel tid of probe thread index i (SampleRecord::thread), handed to Attribute;
  /// absent or 0 = unknown (Attribute takes the task switched in before the wake-up).
  std::vector<int> probe_tids;
  SessionPlan session;
};

/// The threads of one wake path's probes (measure::ProbeThreadIds, handed over by the
/// suite's sink so trace/ does not see measure/).
struct ProbeThreads {
  std::string wake;              ///< The wake path's name.
  int64_t from_ns = 0;           ///< Samples with expected_ns >= from_ns are these threads'.
  std::vector<int> probe_tids;   ///< Index = probe thread index.
  std::vector<int> helper_tids;  ///< The wake path's helper threads (xthread waker, ...).
};

/// p50/p99 of the samples without and with the trace recording, from the same probes in
/// one run (the cost phase, then the rest).
struct ExplainCost {
  uint64_t samples_without = 0;
  uint64_t samples_with = 0;
  int64_t p50_without_ns = 0, p99_without_ns = 0;
  int64_t p50_with_ns = 0, p99_with_ns = 0;
};

struct ExplainSummary {
  int64_t threshold_ns = 0;
  bool active = false;             ///< The trace ran; false: unavailable_reason says why.
  std::string unavailable_reason;  ///< One sentence with the fix; also a run warning.
  uint64_t spikes_seen = 0;        ///< Samples above the threshold.
  uint64_t spikes_explained = 0;
  uint64_t spikes_not_explained = 0;      ///< Beyond max_explained, in the cost phase, or inactive.
  std::vector<Explanation> explanations;  ///< In the order they were explained.
  std::vector<std::string> verdicts;      ///< Verdict() of each, same order.
  std::vector<int64_t> explained_after_ns;  ///< Wall time from each spike's wake-up to its
                                            ///< explanation ("within 1 s" is checked on it).
  CauseTable causes;
  SessionStats trace;
  /// Each wake path's threads, in the order they ran (SetProbeThreads).
  std::vector<ProbeThreads> probe_threads;
  /// Why the probes' syscalls were not traced ("" when trace.syscall_filter is in force).
  std::string syscall_note;
  std::optional<ExplainCost> cost;  ///< With a cost phase that saw samples in both phases.
  std::vector<std::string> notes;   ///< e.g. lost events, spikes not explained and why.
};

class Explainer {
 public:
  /// Called from the analysis thread for each explained spike (the live verdict line).
  using SpikeCallback = std::function<void(const Explanation&, const std::string& verdict)>;

  /// Opens the real trace session. Never fails: when the trace cannot be had (no tracefs,
  /// no permission, instance busy, built without libtracefs) the explainer is inactive,
  /// counts spikes only, and summary().unavailable_reason says why.
  static std::unique_ptr<Explainer> Start(const ExplainPlan& plan, SpikeCallback on_spike);
  /// The same with a given event source (tests script one).
  static std::unique_ptr<Explainer> StartWith(const ExplainPlan& plan,
                                              std::unique_ptr<EventSource> source,
                                              SpikeCallback on_spike);
  /// An inactive explainer that counts spikes and explains none, with `reason` as the
  /// summary's unavailable_reason (what Start() returns when the trace cannot be had).
  static std::unique_ptr<Explainer> StartUnavailable(const ExplainPlan& plan, std::string reason);
  ~Explainer();
  Explainer(const Explainer&) = delete;
  Explainer& operator=(const Explainer&) = delete;

  bool active() const;
  /// Samples as the run's sample writer drains them (one thread at a time); O(1) per sample
  /// below the threshold.
  void OnSamples(const SampleRecord* records, size_t count);
  /// A late job from a workload without sample records (the control loop), from any
  /// thread. Explained when actual - expected is above the threshold, like a sample. Such a
  /// workload has no sample stream to time a cost phase by: give it cost_phase_ns = 0 (with
  /// a cost phase, its phase starts at the first spike's wake-up, and spikes before the
  /// recording was turned on are counted as not explained).
  void OnSpike(const SpikeInput& spike);
  /// A wake path's probe threads, before it measures (from the engine's main thread, also
  /// while OnSamples runs): spikes of those threads get their tid, and with the full event
  /// set the trace's raw_syscalls are filtered to exactly those tids (and the helpers). Not
  /// from a probe: it writes tracefs files.
  void SetProbeThreads(const ProbeThreads& threads);
  /// Explains what is still queued (waiting at most ~1 s for the trace to catch up), stops
  /// the trace, removes the instance, and returns everything. Call once, after the last
  /// OnSamples(); later samples and spikes are ignored.
  ExplainSummary Finish();

 private:
  Explainer();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rtpulse::trace
