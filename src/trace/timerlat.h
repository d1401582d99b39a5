// `--wake timerlat`: the kernel's timerlat tracer as a wake path (docs/wake-paths.md#timerlat).
// The kernel arms a per-CPU timer every timerlat_period_us and reports two latencies per
// activation in ftrace:timerlat records: at the timer's hard IRQ and when the woken thread
// runs. rtpulse configures osnoise/ (every value it changes is saved and written back at the
// end), runs the tracer in its own instance (session.h, plan.timerlat), and either runs the
// user-space interface itself (Linux 6.6+: one pinned thread per CPU at the probes' policy and
// priority, blocked in read() on osnoise/per_cpu/cpuN/timerlat_fd) or, on older kernels, lets
// the kernel's own timerlat/N threads do it. The records' sequence numbers are the kernel's
// activation count per CPU: a gap is a record lost from the trace buffer, counted as missed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/histogram.h"
#include "trace/event.h"
#include "trace/session.h"

namespace rtpulse::trace {

/// The timerlat tracer's activation period must lie in this range (the kernel refuses others).
inline constexpr int64_t kTimerlatMinPeriodUs = 100;
inline constexpr int64_t kTimerlatMaxPeriodUs = 1'000'000;

/// Writes files of an osnoise/ folder, keeping the value each had before its first change, and
/// writes them back (in reverse order) in Restore() or the destructor. osnoise/options is a
/// list of flags ("OSNOISE_WORKLOAD" or "NO_OSNOISE_WORKLOAD", ...) written one at a time.
class OsnoiseSettings {
 public:
  explicit OsnoiseSettings(std::string osnoise_dir) : dir_(std::move(osnoise_dir)) {}
  ~OsnoiseSettings();  ///< Restore(); never throws.
  OsnoiseSettings(const OsnoiseSettings&) = delete;
  OsnoiseSettings& operator=(const OsnoiseSettings&) = delete;

  /// Saves `file`'s value (the first time only), then writes `value`. ResourceError naming
  /// the file and the kernel's errno when either fails.
  Status Set(const std::string& file, const std::string& value);
  /// Sets one flag of osnoise/options on or off, saving the options line first.
  Status SetOption(const std::string& option, bool on);
  /// Writes every saved value back, newest first; returns the first failure (all are tried).
  Status Restore();
  /// What was changed, as "file: old -> new", for the notes (values written unchanged are
  /// left out; they are restored all the same).
  std::vector<std::string> Changes() const;
  const std::string& dir() const { return dir_; }
  /// Tests: every write (file name, value) is also appended here, in order, so a fixture
  /// folder of plain files shows what the kernel's flag file would have been told.
  void set_write_log(std::vector<std::pair<std::string, std::string>>* log) { write_log_ = log; }

 private:
  Status Write(const std::string& file, const std::string& value);

  struct Saved {
    std::string file;
    std::string old_value;
    std::string new_value;
  };
  std::string dir_;
  std::vector<Saved> saved_;
  std::string options_before_;  ///< osnoise/options as read before the first SetOption.
  bool options_saved_ = false;
  std::vector<std::pair<std::string, std::string>>* write_log_ = nullptr;
};

/// One CPU's timerlat samples: the IRQ and the thread latency of every activation.
struct TimerlatCpu {
  int cpu = -1;
  int tid = 0;         ///< The user-space thread (or the kernel's timerlat/N thread; 0 = unknown).
  std::string policy;  ///< That thread's policy ("fifo", ...) and priority, as it ran.
  int priority = 0;
  int64_t last_irq_latency_ns = 0, last_thread_latency_ns = 0;
  Histogram irq;
  Histogram thread;
  uint64_t first_seq = 0;  ///< First sequence number seen (the kernel counts from 1).
  uint64_t last_irq_seq = 0, last_thread_seq = 0;
  uint64_t irq_lost = 0;      ///< Activations before the last one seen without an IRQ record.
  uint64_t thread_lost = 0;   ///< Same for the thread record.
  uint64_t out_of_order = 0;  ///< Records with a sequence number not above the last one.
  /// Context 2 records (the user-space thread back in the kernel after its cycle: rtla's "Ret
  /// user Timer Latency", from the timer's expiry), with the user-space interface only.
  Histogram user;
  uint64_t user_return = 0;    ///< Those records, as counted (out-of-sequence ones included).
  uint64_t last_user_seq = 0;  ///< Activation number of the last one kept.
  int64_t last_user_latency_ns = 0;
  /// Periods the kernel skipped without numbering them: when the thread comes back later
  /// than the next expiry, timerlat re-arms for the first expiry still ahead. Found from the
  /// gap between consecutive IRQ records' expiries (record time - latency).
  uint64_t skipped_periods = 0;
  /// Each skipped period's lateness, from its expiry to the late thread wake-up that ended
  /// the stall (as measure's skipped_histogram).
  Histogram skipped;
  int64_t last_expiry_ns = 0;  ///< Of the last IRQ record.
  int64_t last_irq_ts_ns = 0;  ///< Record times of the last IRQ and thread records.
  int64_t last_thread_ts_ns = 0;
};

/// Fills TimerlatCpu histograms from ftrace:timerlat events, counting sequence gaps exactly.
/// Single writer (the session's reader thread); read after it stopped.
class TimerlatCollector {
 public:
  /// `period_ns` (timerlat_period_us) finds skipped periods; 0 = do not look for them.
  explicit TimerlatCollector(const std::vector<int>& cpus, int64_t period_ns = 0);
  /// kTimerlat events of the CPUs given; any other event or CPU is counted in ignored().
  void OnEvent(const TraceEvent& event);
  std::vector<TimerlatCpu>& cpus() { return cpus_; }
  const std::vector<TimerlatCpu>& cpus() const { return cpus_; }
  uint64_t ignored() const { return ignored_; }

 private:
  std::vector<TimerlatCpu> cpus_;
  std::vector<int> index_of_cpu_;  ///< CPU number -> index into cpus_, -1 = not measured.
  int64_t period_ns_ = 0;
  uint64_t ignored_ = 0;
};

/// One thread latency sample, handed to TimerlatPlan::on_sample as it is read (for --explain).
struct TimerlatSample {
  int cpu = 0;
  uint64_t seq = 0;
  int64_t expected_ns = 0;  ///< The timer's expiry (record time - latency), CLOCK_MONOTONIC.
  int64_t actual_ns = 0;    ///< When the thread ran (the record's trace_clock mono time).
};

struct TimerlatPlan {
  std::vector<int> cpus;          ///< One activation stream per CPU; must not be empty.
  int64_t period_ns = 1'000'000;  ///< timerlat_period_us (whole microseconds).
  int64_t duration_ns = 0;        ///< 0 = until `stop_within` says stop.
  int sched_policy = 1;           ///< SCHED_FIFO; the user-space threads' policy.
  std::string policy_name = "fifo";
  int priority = 80;
  /// "auto": the user-space interface where the kernel has it, else the kernel's threads;
  /// "user" or "kernel" to force one (tests).
  std::string mode = "auto";
  std::string tracefs_dir;  ///< "" = find it (as SessionPlan::tracefs_dir).
  /// Polled by the run between checks: true when SIGINT/SIGTERM came within the timeout.
  std::function<bool(int64_t timeout_ns)> stop_within;
  /// Every thread-context sample as it is read (from the session's reader thread).
  std::function<void(const TimerlatSample&)> on_sample;
};

struct TimerlatResult {
  std::string mode;  ///< "user" (rtpulse's threads on timerlat_fd) or "kernel" (timerlat/N).
  std::vector<TimerlatCpu> cpus;
  int64_t start_realtime_ns = 0, end_realtime_ns = 0, duration_ns = 0;
  bool interrupted = false;
  std::vector<std::string> notes;     ///< Mode, osnoise/ changes restored, lost records.
  std::vector<std::string> warnings;  ///< A thread that could not get its policy, ...
  SessionStats trace;
};

/// The tracefs folder where the timerlat tracer can run, or why not: no tracefs, no timerlat tracer
/// (CONFIG_TIMERLAT_TRACER), or busy (another instance runs timerlat or osnoise). Checked
/// before anything is changed.
Expected<std::string> FindTimerlatTracefs(const std::string& tracefs_dir);

/// Runs the timerlat tracer on plan.cpus for plan.duration_ns (or until stopped), with every
/// osnoise/ value restored before it returns, on error too. Errors (ResourceError, exit 3): no
/// timerlat tracer (names CONFIG_TIMERLAT_TRACER and `rtpulse check`), busy (another user of
/// timerlat/osnoise, EBUSY), no permission.
Expected<TimerlatResult> RunTimerlat(const TimerlatPlan& plan);

}  // namespace rtpulse::trace
