#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/fs_root.h"
#include "core/sched_policy.h"
#include "measure/wake_path.h"

// The periodic control loop of `rtpulse control` (docs/control.md): the measurement engine's
// probe machinery (RT set-up in the thread, the same wake sources as `latency --wake`,
// allocation-free loop) running a job per release and recording, for job k, its release r_k
// on the period grid, its start s_k (after the wake-up) and its completion c_k.
namespace rtpulse::control {

/// --policy: other:NICE, fifo:PRIO, rr:PRIO, deadline:RUNTIME/DEADLINE/PERIOD.
struct PolicySpec {
  enum class Kind { kOther, kFifo, kRr, kDeadline };
  Kind kind = Kind::kFifo;
  int nice = 0;            ///< kOther: -20..19.
  int priority = 0;        ///< kFifo, kRr: 1..99.
  int64_t runtime_ns = 0;  ///< kDeadline.
  int64_t deadline_ns = 0;
  int64_t period_ns = 0;
};

/// Parses a --policy value ("fifo:99", "other:-19", "deadline:400us/4ms/4ms"). Usage errors
/// name the value and the fix: unknown policy (did you mean), priority outside 1..99, nice
/// outside -20..19, runtime > deadline > period, a zero or missing time.
Expected<PolicySpec> ParsePolicySpec(std::string_view text);
/// The scheduling policy the loop thread runs under: fifo and rr as given, SCHED_OTHER for
/// other, and for deadline until its wake source arms SCHED_DEADLINE.
SchedPolicy ThreadSchedPolicy(const PolicySpec& spec);
/// The canonical text of `spec` ("fifo:99", "deadline:400us/4ms/4ms"), parseable again.
std::string FormatPolicySpec(const PolicySpec& spec);
/// A scenario-name-safe form ("fifo-99", "deadline-400us", "other-n19"). A deadline policy
/// whose DEADLINE or PERIOD differ from each other also names both
/// ("deadline-400us-3ms-4ms"), so two such policies never share a slug.
std::string PolicySlug(const PolicySpec& spec);

/// Usage error unless `cpu` is listed in /sys/devices/system/cpu/online under `root`.
Status CheckCpuOnline(int cpu, const FsRoot& root);

/// One job as measured (CLOCK_MONOTONIC ns).
struct JobTiming {
  int64_t release_ns = 0;  ///< r_k: the grid point this job serves.
  int64_t start_ns = 0;    ///< s_k: when the job started, right after the wake-up.
  int64_t end_ns = 0;      ///< c_k: when the job finished.
  /// Releases after the previous job's that were skipped because it (or this wake-up) ran
  /// past them: r_k - r_{k-1} = (1 + skipped_before) * period.
  uint32_t skipped_before = 0;
  bool miss = false;  ///< c_k > r_k + deadline.
  /// SCHED_DEADLINE only: the kernel restarted its period before this wake-up, so the loop
  /// re-anchored its grid here: release_ns is the wake-up time and the job's wake-up latency
  /// is unknown (not zero); its response and miss count from the wake-up.
  bool release_unknown = false;
};

/// RT throttling as configured under `root` (/proc/sys/kernel/sched_rt_runtime_us and
/// sched_rt_period_us) and the jobs that show its signature (docs/control.md).
struct RtThrottling {
  bool known = false;    ///< Both files read and parsed.
  bool enabled = false;  ///< runtime >= 0 and < period.
  int64_t runtime_us = 0;
  int64_t period_us = 0;
  uint64_t suspect_jobs = 0;  ///< Jobs with a stall as long as the throttled gap.
  std::string text;           ///< The sentence for ControlRunRecord::rt_throttling.
};
/// Reads the settings and, for a fifo/rr run (`realtime`), counts the jobs whose wake-up
/// latency or execution time is at least 90 % of the throttled gap (period - runtime).
RtThrottling DescribeRtThrottling(const FsRoot& root, bool realtime,
                                  const std::vector<JobTiming>& jobs);

/// The job the loop runs each release. Run() must not allocate or block.
class JobBody {
 public:
  virtual ~JobBody() = default;
  virtual void Run(uint64_t k) = 0;
};

/// Jobs the loop keeps when plan.jobs is 0 (about 67 min at 4 ms); the run ends there and
/// says so in its warnings.
inline constexpr uint64_t kMaxUnboundedJobs = 1'000'000;
/// The most jobs one run may ask for (their log is reserved up front, 32 B a job).
inline constexpr uint64_t kMaxJobs = 10'000'000;

/// A validated control run.
struct ControlLoopPlan {
  PolicySpec policy;
  measure::WakePath path = measure::WakePath::kAbs;  ///< kDeadline when policy is deadline.
  int64_t period_ns = 4'000'000;
  int64_t deadline_ns = 0;  ///< 0: the period.
  uint64_t jobs = 10'000;   ///< Jobs to run (0: until stop, at most kMaxUnboundedJobs).
  int cpu = -1;             ///< -1: not pinned.
  bool lock_memory = true;
  /// Ground truth for tests: job k with k % inject_every == inject_every - 1 spins
  /// `inject_ns` more inside its execution (0: off).
  uint64_t inject_every = 0;
  int64_t inject_ns = 0;
  /// Called in the loop's thread after its RT set-up, right before the first job, and after
  /// the last job (outside the loop); may allocate. `rtpulse control` opens and reads the
  /// thread's perf counters here (measure/perf_counters.h).
  std::function<void()> before_loop;
  std::function<void()> after_loop;
};

/// What the loop's thread measured and what it could set up.
struct ControlRunRecord {
  std::vector<JobTiming> jobs;  ///< Reserved for plan.jobs before the loop starts.
  uint64_t releases = 0;        ///< Grid points passed: jobs + skipped.
  /// Releases no job served (overruns): the jobs' skipped_before plus skipped_after_last.
  uint64_t skipped = 0;
  /// The releases the last job ran past (grid points strictly before its end, the rule of
  /// skipped_before), which no next job counts; included in skipped and releases.
  uint32_t skipped_after_last = 0;
  uint64_t misses = 0;  ///< Jobs with c > r + deadline.
  /// SCHED_DEADLINE only: wake-ups before our grid point, where the kernel restarted its
  /// period after an overrun; the loop re-anchors its grid there (docs/control.md).
  uint64_t grid_restarts = 0;
  /// Jobs with RT throttling's signature (DescribeRtThrottling), fifo/rr runs only.
  uint64_t rt_throttle_suspects = 0;
  int tid = 0;
  /// The policy as read back from the kernel in the thread (sched_getattr), e.g. "fifo:99".
  std::string applied_policy;
  bool degraded = false;  ///< Some RT set-up was refused; see warnings.
  bool interrupted = false;
  /// SCHED_DEADLINE: overruns the kernel signalled (SIGXCPU with SCHED_FLAG_DL_OVERRUN), if
  /// it could be asked for; nullopt when not a deadline run or not available.
  std::optional<uint64_t> deadline_overruns;
  /// RT throttling as found (/proc/sys/kernel/sched_rt_runtime_us and _period_us) and
  /// whether the run shows its signature; a sentence for the notes.
  std::string rt_throttling;
  std::vector<std::string> warnings;
  int64_t start_realtime_ns = 0;
  int64_t end_realtime_ns = 0;
};

/// Live counters a non-RT thread may read while the loop runs. skipped, misses and
/// max_response_ns are relaxed (progress only). `jobs` is stored with release order after
/// job jobs-1's slot is written, and `job_log` (the record's pre-sized job log) is stored
/// before the first job: JobsSoFar() reads them with acquire and copies a data-race-free
/// snapshot of the jobs so far (a slot below the count is never written again). `tid` is the
/// loop thread's kernel tid, stored (release) as the thread starts, before its set-up and its
/// first job; 0 until then.
struct ControlLive {
  std::atomic<int> tid{0};
  std::atomic<uint64_t> jobs{0};
  std::atomic<uint64_t> skipped{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<int64_t> max_response_ns{0};
  std::atomic<const JobTiming*> job_log{nullptr};
};

/// A copy of the jobs the loop has recorded so far (for checkpoints). Valid while the loop
/// runs and afterwards as long as the ControlRunRecord it returned (which owns the log) is
/// alive; allocates, so never call it from the loop's thread.
inline std::vector<JobTiming> JobsSoFar(const ControlLive& live) {
  const uint64_t n = live.jobs.load(std::memory_order_acquire);
  const JobTiming* const log = live.job_log.load(std::memory_order_acquire);
  if (n == 0 || log == nullptr) return {};
  return std::vector<JobTiming>(log, log + n);
}

/// Runs `plan` on a new thread (RT set-up inside it) and returns when it finished its jobs or
/// `stop` was set (then `interrupted`, with the jobs so far). Usage errors: a deadline policy
/// whose period differs from plan.period_ns, a period of 0. Resource errors: the thread or
/// wake source could not be set up at all. Usage errors also for: a deadline policy on a
/// path other than kDeadline (or kDeadline without one), the drifting `rel` path (the loop
/// needs a fixed grid), a negative deadline, a plan.cpu the running kernel has offline. The
/// CPU check and the RT-throttling sentence read the running kernel (FsRoot::Live()): the
/// loop ran there, whatever fixture tree describes the machine.
Expected<ControlRunRecord> RunControlLoop(const ControlLoopPlan& plan, JobBody& body,
                                          const std::atomic<bool>& stop, ControlLive* live);

}  // namespace rtpulse::control
