// The --explain pipeline (explainer.h): samples -> threshold -> a bounded queue -> the
// analysis thread -> Flush, Window, Attribute, the raw window file, the verdict. The probe
// side only compares and, during the cost measurement, records into a histogram.
#include "trace/explainer.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/cpus.h"
#include "core/file_owner.h"
#include "core/histogram.h"

namespace rtpulse::trace {
namespace {

constexpr int64_t kExplainerFlushPollNs = 10'000'000;  // between Flush retries
constexpr int64_t kExplainerNever = std::numeric_limits<int64_t>::max();

/// "7.5 us" below 10 us, "83 us" above: the verdict line's style.
std::string ExplainerUs(int64_t ns) {
  char text[48];
  const double us = static_cast<double>(ns) / 1000.0;
  if (us > -10.0 && us < 10.0) {
    std::snprintf(text, sizeof text, "%.1f us", us);
  } else {
    std::snprintf(text, sizeof text, "%.0f us", us);
  }
  return text;
}

std::string ExplainerSeconds(int64_t ns) {
  char text[48];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(ns) / 1e9);
  return text;
}

std::string ExplainerCount(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

struct Explainer::Impl {
  /// A spike as queued. `carried`: it was due before its probe had woken for the previous
  /// period (a missed period), so the timer for it was armed late and the previous spike's
  /// cause delays it too.
  struct Queued {
    SpikeInput spike;
    bool carried = false;
  };

  ExplainPlan plan;
  SpikeCallback on_spike;
  std::unique_ptr<EventSource> source;  // null when inactive
  TraceSession* session = nullptr;      // the real session inside `source`, for its reader
  bool active = false;
  std::string unavailable_reason;
  bool cost_tracking = false;  // active with a cost phase: const after start

  // The cost measurement. The histograms have one writer, the OnSamples thread.
  Histogram cost_without, cost_with;
  std::atomic<bool> phase_over{false};
  /// When SetRecording(true) was called (plan clock): samples that woke before it were
  /// taken without the trace, spikes due before it cannot be explained.
  std::atomic<int64_t> recording_on_at_ns{kExplainerNever};
  /// The last wake-up of each probe thread (OnSamples thread only), for `Queued::carried`.
  std::vector<int64_t> last_actual_ns;

  std::mutex mutex;  // guards everything below
  std::condition_variable wake;
  bool phase_started = false;
  int64_t phase_end_ns = 0;
  std::deque<Queued> queue;
  bool stopping = false;
  bool finished = false;
  uint64_t seen = 0;
  uint64_t accepted = 0;  // queued or explained
  uint64_t inactive_spikes = 0;
  uint64_t cost_phase_spikes = 0;
  uint64_t beyond_max_spikes = 0;
  uint64_t finish_dropped_spikes = 0;
  // Written by the analysis thread (under `mutex`), read after it has been joined.
  std::vector<Explanation> explanations;
  std::vector<std::string> verdicts;
  std::vector<int64_t> explained_after_ns;
  uint64_t flush_timeouts = 0;
  uint64_t carried_explained = 0;
  uint64_t trimmed_windows = 0;  ///< Spikes whose window start the store had dropped.
  uint64_t window_failures = 0;
  std::string window_error;
  std::vector<ProbeThreads> probe_threads;  // SetProbeThreads, in order
  std::string syscall_note;

  /// The tid of probe thread `index` for a sample due at `expected_ns`: from the last
  /// thread set published before it, else the plan's. Under `mutex`.
  int ProbeTidLocked(size_t index, int64_t expected_ns) const {
    for (auto it = probe_threads.rbegin(); it != probe_threads.rend(); ++it) {
      if (it->from_ns > expected_ns) continue;
      return index < it->probe_tids.size() ? it->probe_tids[index] : 0;
    }
    return index < plan.probe_tids.size() ? plan.probe_tids[index] : 0;
  }

  // Analysis thread only.
  bool window_dir_ready = false;
  bool window_dir_failed = false;
  std::vector<int> cpus_idle_at_finish;  // Flush timed out on them after Finish began

  /// Finish()'s deadline on the real clock; never before Finish.
  std::atomic<int64_t> finish_deadline_ns{kExplainerNever};
  /// Set by Finish(): samples and spikes after it are ignored (the source is gone).
  std::atomic<bool> done{false};
  std::thread thread;

  int64_t Now() const { return plan.now_ns ? plan.now_ns() : MonotonicNs(); }

  /// The phase clock starts at the first wake-up it sees; the first one past the phase turns
  /// the recording on. Under `mutex`.
  void AdvancePhaseLocked(int64_t actual_ns) {
    if (phase_over.load(std::memory_order_relaxed)) return;
    if (!phase_started) {
      phase_started = true;
      phase_end_ns = actual_ns + plan.cost_phase_ns;
    }
    if (actual_ns < phase_end_ns) return;
    source->SetRecording(true);
    recording_on_at_ns.store(Now(), std::memory_order_relaxed);
    phase_over.store(true, std::memory_order_release);
  }

  void RecordCost(int64_t actual_ns, int64_t latency_ns) {
    if (!phase_over.load(std::memory_order_acquire)) {
      std::lock_guard lock(mutex);
      AdvancePhaseLocked(actual_ns);
    }
    if (actual_ns < recording_on_at_ns.load(std::memory_order_relaxed)) {
      cost_without.Record(latency_ns);
    } else {
      cost_with.Record(latency_ns);
    }
  }

  /// One spike above the threshold: queued, or counted with the reason it is not. Under
  /// `mutex`.
  void IntakeLocked(const SpikeInput& spike, bool carried) {
    if (finished) return;
    ++seen;
    if (!active) {
      ++inactive_spikes;
    } else if (cost_tracking &&
               spike.expected_ns < recording_on_at_ns.load(std::memory_order_relaxed)) {
      ++cost_phase_spikes;
    } else if (accepted >= plan.max_explained) {
      ++beyond_max_spikes;
    } else {
      ++accepted;
      queue.push_back({spike, carried});
      wake.notify_one();
    }
  }

  void Run() {
    for (;;) {
      Queued spike;
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [this] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        if (stopping && MonotonicNs() >= finish_deadline_ns.load()) {
          finish_dropped_spikes += queue.size();
          queue.clear();
          return;
        }
        spike = queue.front();
        queue.pop_front();
      }
      Explain(spike);
    }
  }

  /// Waits (bounded) until the store holds an event past the spike's wake-up on its CPU.
  bool CatchUp(const SpikeInput& spike) {
    const int64_t until_ns = spike.actual_ns + plan.margin_ns;
    const bool finishing = finish_deadline_ns.load() != kExplainerNever;
    // After the run, a CPU that had nothing newer once will not get anything soon either.
    const bool one_try =
        finishing && std::find(cpus_idle_at_finish.begin(), cpus_idle_at_finish.end(), spike.cpu) !=
                         cpus_idle_at_finish.end();
    const int64_t limit_ns =
        std::min(MonotonicNs() + plan.flush_wait_ns, finish_deadline_ns.load());
    for (;;) {
      if (source->Flush(spike.cpu, until_ns)) return true;
      const int64_t now_ns = MonotonicNs();
      if (one_try || now_ns >= limit_ns) break;
      const int64_t nap_ns = std::min(kExplainerFlushPollNs, limit_ns - now_ns);
      std::this_thread::sleep_for(std::chrono::nanoseconds(nap_ns));
    }
    if (finish_deadline_ns.load() != kExplainerNever && !one_try) {
      cpus_idle_at_finish.push_back(spike.cpu);
    }
    return false;
  }

  std::vector<int> WindowCpus(int cpu) const {
    std::vector<int> cpus = plan.session.cpus;  // empty = every CPU of the trace
    if (!cpus.empty() && std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) {
      cpus.push_back(cpu);
      std::sort(cpus.begin(), cpus.end());
    }
    return cpus;
  }

  void Explain(const Queued& queued) {
    const SpikeInput& spike = queued.spike;
    const bool caught_up = CatchUp(spike);
    const std::vector<int> cpus = WindowCpus(spike.cpu);
    WindowLoss loss;
    // The saved window's text comes with the events, from one state of the store.
    WindowText text{spike.expected_ns - plan.margin_ns, spike.actual_ns + plan.margin_ns, {}};
    const bool save = !plan.window_dir.empty() && !window_dir_failed;
    // Up to what the saved window shows after the wake-up (margin_ns): Attribute reads the
    // first event on the CPU after actual_ns to see who was switched in unrecorded.
    const std::vector<TraceEvent> events =
        source->Window(spike.expected_ns - plan.history_ns, spike.actual_ns + plan.margin_ns, cpus,
                       &loss, save ? &text : nullptr);
    Explanation explanation = Attribute(events, spike, loss);
    std::string verdict = Verdict(explanation);
    if (save) {
      explanation.window_file =
          SaveWindow(explanations.size(), explanation, verdict, queued.carried, text);
    }
    const int64_t after_ns = Now() - spike.actual_ns;
    {
      std::lock_guard lock(mutex);
      if (!caught_up) ++flush_timeouts;
      if (queued.carried) ++carried_explained;
      if (loss.trimmed) ++trimmed_windows;
      explanations.push_back(explanation);
      verdicts.push_back(verdict);
      explained_after_ns.push_back(after_ns);
    }
    if (on_spike) on_spike(explanation, verdict);
  }

  /// The raw window as ftrace text behind a header line naming the spike; "" when not saved.
  std::string SaveWindow(size_t index, const Explanation& explanation, const std::string& verdict,
                         bool carried, const WindowText& window) {
    if (!window_dir_ready) {
      if (Status made = CreateFolders(plan.window_dir); !made) {
        window_dir_failed = true;
        std::lock_guard lock(mutex);
        ++window_failures;
        window_error = made.error().message;
        return "";
      }
      window_dir_ready = true;
    }
    const SpikeInput& spike = explanation.spike;
    char name[64];
    std::snprintf(name, sizeof name, "spike-%05zu-cpu%d.txt", index, spike.cpu);
    const std::string path = plan.window_dir + "/" + name;
    char header[512];
    std::snprintf(
        header, sizeof header,
        "# rtpulse --explain spike %05zu: T:%d cpu %d seq %llu expected %lld ns "
        "actual %lld ns lateness %lld ns (threshold %lld ns), chain %s%s%s%s: ",
        index, spike.thread, spike.cpu, static_cast<unsigned long long>(spike.seq),
        static_cast<long long>(spike.expected_ns), static_cast<long long>(spike.actual_ns),
        static_cast<long long>(explanation.lateness_ns), static_cast<long long>(plan.threshold_ns),
        std::string(ChainKindName(explanation.chain)).c_str(),
        explanation.chain_thread.empty() ? "" : " via ", explanation.chain_thread.c_str(),
        carried ? ", due while the previous period was still late" : "");
    std::string text = header + verdict + "\n";
    text += "# window " + std::to_string(window.from_ns) + " .. " + std::to_string(window.to_ns) +
            " ns (CLOCK_MONOTONIC, trace_clock mono)\n";
    text += window.text;
    if (Status written = WriteFileAtomic(path, text); !written) {
      std::lock_guard lock(mutex);
      ++window_failures;
      window_error = written.error().message;
      return "";
    }
    return path;
  }

  void StartThread() {
    thread = std::thread([this] {
      LeaveTheProbes();
      Run();
    });
  }

  /// The analysis is no real-time work: SCHED_OTHER whatever the starting thread had (a
  /// command may start it from a SCHED_FIFO thread), and off the traced CPUs where others
  /// are online. Best effort: a cpuset that allows only the probe CPUs keeps them.
  void LeaveTheProbes() const { (void)LeaveMeasuredCpus(plan.session.cpus); }

  void AddNotes(ExplainSummary& summary) const;
};

void Explainer::Impl::AddNotes(ExplainSummary& summary) const {
  auto& notes = summary.notes;
  const std::string above = "above " + ExplainerUs(plan.threshold_ns);
  if (!active) {
    notes.push_back("--explain was inactive: " + unavailable_reason + "; " +
                    ExplainerCount(inactive_spikes, "spike", "spikes") + " " + above +
                    " counted, not explained");
    return;
  }
  if (cost_phase_spikes > 0) {
    notes.push_back(ExplainerCount(cost_phase_spikes, "spike", "spikes") + " " + above +
                    " in the cost phase (the first " + ExplainerSeconds(plan.cost_phase_ns) +
                    ", trace not recording) counted, not explained");
  }
  if (beyond_max_spikes > 0) {
    notes.push_back(ExplainerCount(beyond_max_spikes, "spike", "spikes") + " " + above +
                    " beyond the first " + std::to_string(plan.max_explained) +
                    " explained were counted, not explained");
  }
  if (finish_dropped_spikes > 0) {
    notes.push_back(ExplainerCount(finish_dropped_spikes, "spike", "spikes") +
                    " still queued when the run's end allowed no more time (" +
                    ExplainerSeconds(plan.finish_budget_ns) + ") counted, not explained");
  }
  if (flush_timeouts > 0) {
    notes.push_back(ExplainerCount(flush_timeouts, "spike was", "spikes were") +
                    " explained before the trace showed an event past the wake-up on its "
                    "CPU (waited up to " +
                    ExplainerSeconds(plan.flush_wait_ns) +
                    "; usually an idle CPU): the window may end early");
  }
  const auto incomplete = static_cast<uint64_t>(std::count_if(
      explanations.begin(), explanations.end(), [](const Explanation& e) { return !e.complete; }));
  if (carried_explained > 0) {
    notes.push_back(ExplainerCount(carried_explained, "spike was", "spikes were") +
                    " due before the probe had woken for the previous period (a missed "
                    "period): the previous spike's cause delayed them too, and their own "
                    "window may not show it");
  }
  if (incomplete > 0) {
    notes.push_back(ExplainerCount(incomplete, "explanation is", "explanations are") +
                    " incomplete (the trace does not cover the whole window): the gap is "
                    "reported as unaccounted");
  }
  if (trimmed_windows > 0) {
    notes.push_back(
        ExplainerCount(trimmed_windows, "spike was", "spikes were") +
        " explained after rtpulse's trace store had dropped the start of its window (it keeps " +
        ExplainerSeconds(plan.session.retention_ns) + " and " +
        std::to_string(plan.session.max_events_per_cpu) +
        " events per CPU): the explainer fell behind the spikes, so those explanations are "
        "incomplete; a higher --explain threshold gives it fewer to explain");
  }
  if (!summary.trace.tracefs_mount_note.empty()) notes.push_back(summary.trace.tracefs_mount_note);
  if (summary.trace.events_lost > 0) {
    notes.push_back("the kernel dropped " + std::to_string(summary.trace.events_lost) +
                    " trace events (ring buffer overrun); windows that lost events are marked "
                    "incomplete");
  }
  if (plan.session.events == EventSet::kFull && !summary.syscall_note.empty()) {
    notes.push_back("the probe's syscalls were not traced: " + summary.syscall_note);
  }
  if (window_failures > 0) {
    notes.push_back(ExplainerCount(window_failures, "raw window was", "raw windows were") +
                    " not saved: " + window_error);
  }
  if (cost_tracking) {
    if (summary.cost) {
      const ExplainCost& c = *summary.cost;
      notes.push_back("trace cost: without the trace p50 " + ExplainerUs(c.p50_without_ns) +
                      ", p99 " + ExplainerUs(c.p99_without_ns) + " (" +
                      std::to_string(c.samples_without) + " samples, the first " +
                      ExplainerSeconds(plan.cost_phase_ns) + "); with it p50 " +
                      ExplainerUs(c.p50_with_ns) + ", p99 " + ExplainerUs(c.p99_with_ns) + " (" +
                      std::to_string(c.samples_with) + " samples)");
    } else {
      notes.push_back("trace cost not measured: " + std::to_string(cost_without.count()) +
                      " samples without the trace, " + std::to_string(cost_with.count()) +
                      " with it (the run needs samples in both, after a cost phase of " +
                      ExplainerSeconds(plan.cost_phase_ns) + ")");
    }
  }
}

Explainer::Explainer() : impl_(std::make_unique<Impl>()) {}

Explainer::~Explainer() {
  if (impl_->thread.joinable()) {
    {
      std::lock_guard lock(impl_->mutex);
      impl_->stopping = true;
      impl_->queue.clear();
    }
    impl_->finish_deadline_ns.store(MonotonicNs());
    impl_->wake.notify_all();
    impl_->thread.join();
  }
}

std::unique_ptr<Explainer> Explainer::StartUnavailable(const ExplainPlan& plan,
                                                       std::string reason) {
  std::unique_ptr<Explainer> explainer(new Explainer());
  explainer->impl_->plan = plan;
  explainer->impl_->unavailable_reason = std::move(reason);
  return explainer;
}

std::unique_ptr<Explainer> Explainer::StartWith(const ExplainPlan& plan,
                                                std::unique_ptr<EventSource> source,
                                                SpikeCallback on_spike) {
  std::unique_ptr<Explainer> explainer(new Explainer());
  Impl& impl = *explainer->impl_;
  impl.plan = plan;
  impl.on_spike = std::move(on_spike);
  impl.source = std::move(source);
  impl.active = true;
  impl.cost_tracking = plan.cost_phase_ns > 0;
  if (impl.cost_tracking) impl.source->SetRecording(false);
  impl.StartThread();
  return explainer;
}

std::unique_ptr<Explainer> Explainer::Start(const ExplainPlan& plan, SpikeCallback on_spike) {
#if RTPULSE_HAVE_TRACEFS
  Expected<std::unique_ptr<TraceSession>> opened = TraceSession::Open(plan.session);
  if (!opened) return StartUnavailable(plan, opened.error().message);
  TraceSession* session = opened->get();
  std::unique_ptr<Explainer> explainer =
      StartWith(plan, std::move(opened.value()), std::move(on_spike));
  explainer->impl_->session = session;
  session->StartReader();
  return explainer;
#else
  (void)on_spike;
  return StartUnavailable(plan,
                          "rtpulse was built without libtracefs (RTPULSE_TRACE=OFF): apt-get "
                          "install libtracefs-dev libtraceevent-dev and rebuild");
#endif
}

bool Explainer::active() const {
  return impl_->active;
}

void Explainer::OnSamples(const SampleRecord* records, size_t count) {
  Impl& impl = *impl_;
  if (impl.done.load(std::memory_order_relaxed)) return;
  const int64_t threshold_ns = impl.plan.threshold_ns;
  for (size_t i = 0; i < count; ++i) {
    const SampleRecord& record = records[i];
    // A missed period is a sample like any other: its latency is still actual - expected.
    const int64_t latency_ns = LatencyNs(record);
    if (impl.cost_tracking) impl.RecordCost(record.actual_ns, latency_ns);
    if (record.thread >= impl.last_actual_ns.size()) {
      impl.last_actual_ns.resize(record.thread + size_t{1}, kExplainerNever);
    }
    int64_t& last_actual_ns = impl.last_actual_ns[record.thread];
    const bool carried = last_actual_ns != kExplainerNever && record.expected_ns < last_actual_ns;
    last_actual_ns = record.actual_ns;
    if (latency_ns <= threshold_ns) continue;
    SpikeInput spike;
    spike.cpu = record.cpu;
    spike.thread = record.thread;
    spike.seq = record.seq;
    spike.expected_ns = record.expected_ns;
    spike.actual_ns = record.actual_ns;
    std::lock_guard lock(impl.mutex);
    spike.probe_tid = impl.ProbeTidLocked(record.thread, record.expected_ns);
    impl.IntakeLocked(spike, carried);
  }
}

void Explainer::SetProbeThreads(const ProbeThreads& threads) {
  Impl& impl = *impl_;
  if (impl.done.load()) return;
  std::vector<int> tids;
  for (int tid : threads.probe_tids) {
    if (tid > 0) tids.push_back(tid);
  }
  for (int tid : threads.helper_tids) {
    if (tid > 0) tids.push_back(tid);
  }
  std::string note;
  if (!impl.active) {
    note = "the trace was inactive";
  } else if (impl.plan.session.events != EventSet::kFull) {
    note =
        "the lean event set traces no syscall (each would cost the probe a trace record per "
        "wake-up; --explain-events full adds them)";
  } else if (Status set = impl.source->SetSyscallPids(tids); !set) {
    note = set.error().message;
  }
  std::lock_guard lock(impl.mutex);
  // The helpers' call repeats the probes' set of the same path: it replaces it.
  if (!impl.probe_threads.empty() && impl.probe_threads.back().from_ns == threads.from_ns) {
    impl.probe_threads.back() = threads;
  } else {
    impl.probe_threads.push_back(threads);
  }
  impl.syscall_note = std::move(note);
}

void Explainer::OnSpike(const SpikeInput& spike) {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.mutex);
  if (impl.finished) return;
  if (impl.cost_tracking) impl.AdvancePhaseLocked(spike.actual_ns);
  if (spike.actual_ns - spike.expected_ns <= impl.plan.threshold_ns) return;
  impl.IntakeLocked(spike, false);
}

ExplainSummary Explainer::Finish() {
  Impl& impl = *impl_;
  impl.finish_deadline_ns.store(MonotonicNs() + impl.plan.finish_budget_ns);
  {
    std::lock_guard lock(impl.mutex);
    impl.finished = true;
    impl.stopping = true;
  }
  impl.done.store(true);
  impl.wake.notify_all();
  if (impl.thread.joinable()) impl.thread.join();
  if (impl.session != nullptr) impl.session->StopReader();

  ExplainSummary summary;
  summary.threshold_ns = impl.plan.threshold_ns;
  summary.active = impl.active;
  summary.unavailable_reason = impl.unavailable_reason;
  summary.spikes_seen = impl.seen;
  summary.spikes_explained = impl.explanations.size();
  summary.spikes_not_explained = impl.inactive_spikes + impl.cost_phase_spikes +
                                 impl.beyond_max_spikes + impl.finish_dropped_spikes;
  summary.explanations = impl.explanations;
  summary.verdicts = impl.verdicts;
  summary.explained_after_ns = impl.explained_after_ns;
  summary.causes = Summarise(impl.explanations);
  if (impl.source) summary.trace = impl.source->stats();
  // The plan's set, also when the trace was inactive or a scripted source stands in.
  summary.trace.event_set = std::string(EventSetName(impl.plan.session.events));
  summary.probe_threads = impl.probe_threads;
  summary.syscall_note = impl.syscall_note;
  if (summary.syscall_note.empty() && summary.trace.syscall_filter.empty()) {
    summary.syscall_note = impl.probe_threads.empty()
                               ? "the run published no probe thread (this workload does not "
                                 "report its threads' tids)"
                               : "no syscall filter was applied";
  }
  if (impl.cost_tracking && impl.cost_without.count() > 0 && impl.cost_with.count() > 0) {
    ExplainCost cost;
    cost.samples_without = impl.cost_without.count();
    cost.samples_with = impl.cost_with.count();
    cost.p50_without_ns = impl.cost_without.Percentile(50);
    cost.p99_without_ns = impl.cost_without.Percentile(99);
    cost.p50_with_ns = impl.cost_with.Percentile(50);
    cost.p99_with_ns = impl.cost_with.Percentile(99);
    summary.cost = cost;
  }
  impl.AddNotes(summary);
  // Stops the reader for good and removes the instance.
  impl.session = nullptr;
  impl.source.reset();
  return summary;
}

}  // namespace rtpulse::trace
