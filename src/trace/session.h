// A kernel trace kept running beside a measurement: a dedicated ftrace instance (so the
// user's own tracing is untouched), trace_clock "mono", the events of event.h on the chosen
// CPUs, read continuously by a non-RT thread into a rolling per-CPU store that windows are
// cut from (docs/trace.md). Instance management and the ring-buffer reading go through
// Debian's libtracefs and libtraceevent; nothing here parses tracefs text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "trace/event.h"

namespace rtpulse::trace {

/// Which events the session enables (docs/trace.md#events). kLean: exactly what the
/// attribution (attribution.h) and the saved window's checker read: sched_switch,
/// sched_waking, irq_handler_entry/exit, softirq_raise/entry/exit, hrtimer_expire_entry and
/// the x86 irq_vectors entry/exit pairs. kFull adds sched_wakeup, hrtimer_start,
/// hrtimer_expire_exit, ipi, workqueue, cpu_idle (and raw_syscalls for syscall_pids), for a
/// kernel engineer reading the raw windows; each costs the traced CPUs a record.
enum class EventSet : uint8_t { kLean, kFull };
std::string_view EventSetName(EventSet set);  ///< "lean", "full".
/// "lean" / "full"; nullopt for anything else.
std::optional<EventSet> ParseEventSet(std::string_view text);
/// Whether this build reads the kernel trace (libtracefs, RTPULSE_TRACE): --explain and the
/// timerlat path; without it each says so.
bool TracingCompiledIn();

struct SessionPlan {
  EventSet events = EventSet::kLean;
  std::vector<int> cpus;                 ///< CPUs whose events are kept; empty = every online CPU.
  size_t buffer_kb_per_cpu = 8192;       ///< The instance's buffer_size_kb.
  int64_t retention_ns = 3'000'000'000;  ///< Events kept per CPU for windows.
  /// Memory bound of the store: at most this many events per CPU (~250 bytes each with
  /// their raw record); a window reaching back past what was dropped is marked lost.
  size_t max_events_per_cpu = 500'000;
  int64_t read_interval_ns = 20'000'000;  ///< The reader's period.
  /// With EventSet::kFull: also trace raw_syscalls for these pids from the start; empty =
  /// none until SetSyscallPids() (the probes' tids are known only once their threads run).
  /// Ignored by kLean (docs/explain.md#events: lean does not pay for syscall records).
  std::vector<int> syscall_pids;
  /// Set the instance's current_tracer to "timerlat" (trace/timerlat.h sets osnoise/).
  bool timerlat = false;
  /// tracefs mount point; "" = find it (/sys/kernel/tracing, then debugfs). Tests point it
  /// at a folder without tracefs to get the "no tracefs" path.
  std::string tracefs_dir;
};

/// What the session enabled and read, for the output's notes.
struct SessionStats {
  std::string instance;  ///< e.g. "rtpulse-12345".
  std::string tracefs_dir;
  /// Said when rtpulse mounted tracefs for this run (MountTracefsIfAbsent), else "".
  std::string tracefs_mount_note;
  std::string event_set;                    ///< EventSetName() of the plan's set.
  std::vector<std::string> events_enabled;  ///< "sched:sched_switch", ...
  std::vector<std::string> events_missing;  ///< Asked for, not in this kernel.
  uint64_t events_read = 0;
  uint64_t events_lost = 0;  ///< Kernel overruns reported by the ring buffer.
  uint64_t bytes_read = 0;
  int64_t reader_cpu_ns = 0;  ///< CPU time of the reader thread (CLOCK_THREAD_CPUTIME_ID).
  /// The raw_syscalls filter in force at the end ("common_pid == 12 || common_pid == 13");
  /// "" = no syscall traced (the explainer says why in its summary).
  std::string syscall_filter;
};

/// A window's ftrace text asked of Window() beside its events: [from_ns, to_ns] rendered from
/// the same state of the store as the events, so a saved window shows what was attributed
/// (the reader trims the store between two separate calls).
struct WindowText {
  int64_t from_ns = 0;
  int64_t to_ns = 0;
  std::string text;  ///< Filled by Window().
};

/// What the explainer needs from a trace: the real session below, or a scripted one in tests.
class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual bool Flush(int cpu, int64_t until_ns) = 0;
  virtual std::vector<TraceEvent> Window(int64_t from_ns, int64_t to_ns,
                                         const std::vector<int>& cpus, WindowLoss* loss = nullptr,
                                         WindowText* text = nullptr) const = 0;
  /// Turns recording on or off in the instance (tracing_on), for the cost measurement.
  virtual void SetRecording(bool on) = 0;
  /// Traces raw_syscalls sys_enter/sys_exit of exactly these tasks from now on (replacing an
  /// earlier set); the error says why not (lean event set, no such events, tracefs refused).
  virtual Status SetSyscallPids(const std::vector<int>& pids) {
    (void)pids;
    return Failure("this event source traces no syscall");
  }
  virtual SessionStats stats() const = 0;
};

class TraceSession final : public EventSource {
 public:
  /// Creates the instance (removing a stale "rtpulse-PID" left by a dead process first),
  /// sets trace_clock mono, buffer size, tracing_cpumask and the events, and starts
  /// tracing. Errors: ResourceError naming the cause and the fix: no tracefs ("mount -t
  /// tracefs nodev /sys/kernel/tracing"), no permission (run as root / CAP_SYS_ADMIN), the
  /// instance busy, no "mono" trace clock.
  static Expected<std::unique_ptr<TraceSession>> Open(const SessionPlan& plan);
  ~TraceSession() override;  ///< Stops the reader, removes the instance. Never throws.
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  /// Starts the reader thread (SCHED_OTHER, on no probe CPU where it can avoid them).
  void StartReader();
  /// Stops the reader after a last read.
  void StopReader();

  /// Reads what the kernel holds now (from the calling thread, serialised with the
  /// reader), so that every event up to `until_ns` on `cpu` (-1 = all) is in the store.
  /// Returns false if the store still ends before until_ns after the read (nothing newer
  /// recorded yet on that CPU: an idle CPU has no event after its last one).
  bool Flush(int cpu, int64_t until_ns) override;

  /// A copy of the stored events with from_ns <= ts <= to_ns on `cpus` (all when empty),
  /// in timestamp order, plus for each of those CPUs the last sched_switch before from_ns
  /// (the task running when the window opened), if still retained. `loss` (if given) says
  /// whether the kernel reported lost events on one of those CPUs between from_ns and to_ns
  /// (`kernel`), and whether the store no longer holds the start of the window (`trimmed`:
  /// retention_ns, max_events_per_cpu).
  /// `text` (if given): its interval on the same CPUs as RenderWindow() renders it, under
  /// the same lock as the events.
  std::vector<TraceEvent> Window(int64_t from_ns, int64_t to_ns, const std::vector<int>& cpus,
                                 WindowLoss* loss = nullptr,
                                 WindowText* text = nullptr) const override;

  /// The same window as ftrace's text ("comm-pid [cpu] ts: event: fields", ns timestamps),
  /// for a kernel engineer; rendered by libtraceevent from the stored raw records.
  std::string RenderWindow(int64_t from_ns, int64_t to_ns, const std::vector<int>& cpus) const;
  void SetRecording(bool on) override;
  /// Writes the common_pid filter of both raw_syscalls events, then enables them (kFull
  /// only). Safe while the reader runs.
  Status SetSyscallPids(const std::vector<int>& pids) override;

  /// Called for every ftrace:timerlat sample (trace/timerlat.h), from whichever thread reads
  /// (the reader, or a Flush caller) with the session's lock held: it must not call back
  /// into the session.
  void SetTimerlatCallback(std::function<void(const TraceEvent&)> callback);

  SessionStats stats() const override;
  const std::string& instance_dir() const;  ///< <tracefs>/instances/rtpulse-PID

 private:
  TraceSession();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rtpulse::trace
