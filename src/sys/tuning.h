#pragma once

// rtpulse suite --tune: the run-time settings `rtpulse check` recommends, applied for one run
// and put back on every exit path. docs/tuning.md explains each one.

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/fs_root.h"
#include "sys/tuning_guardian.h"

namespace rtpulse::sys {

/// The tunings one at a time, as `suite --tune-ab` switches them (docs/tuning.md); kIdleStates
/// is `latency --deepest-idle-state`'s, applied only when asked for.
enum class TuneKnob {
  kGovernor,
  kMinFreq,
  kRtThrottling,
  kDefaultIrqAffinity,
  kIrqAffinity,
  kIdleStates
};

/// Every knob, in the order --tune applies them.
inline constexpr TuneKnob kTuneKnobs[] = {TuneKnob::kGovernor, TuneKnob::kMinFreq,
                                          TuneKnob::kRtThrottling, TuneKnob::kDefaultIrqAffinity,
                                          TuneKnob::kIrqAffinity};

/// "governor", "min-freq", "rt-throttling", "default-irq-affinity", "irq-affinity",
/// "idle-states".
std::string_view TuneKnobName(TuneKnob knob);

struct TuneOptions {
  /// CPUs the probes run on: IRQs move off them.
  std::vector<int> measured_cpus;
  /// Empty: read /sys/devices/system/cpu/online under the root.
  std::vector<int> online_cpus;
  /// kernel.sched_rt_runtime_us := -1. Off by default: a runaway real-time thread can then
  /// starve its CPU for good.
  bool rt_throttling_off = false;
  /// Only this knob (rt_throttling_off is then ignored); nullopt: every knob --tune applies.
  std::optional<TuneKnob> only;
  /// cyclictest --deepest-idle-state N: on the measured CPUs, every cpuidle state deeper than
  /// N is disabled (-1: every state). nullopt: idle states left alone.
  std::optional<int> deepest_idle_state;
  /// Where to keep a JSON record of the changes for a human (results dir/tuning_journal.json);
  /// "" for none. Rewritten after applying and after restoring.
  std::string journal_path;
  /// What the guardian runs after restoring for a killed rtpulse (TuneGuardian::Start's
  /// `after_restore`): `suite` marks result.json killed with it. Empty: nothing.
  std::vector<std::string> after_restore;
  /// How files are written (tests make some refuse).
  KernelFileWriter write_file = &WriteKernelFile;
};

/// kApplied: the file now holds `after`. kRefused: the kernel rejected the write (per-CPU and
/// managed IRQs answer EIO): not an error. kSkipped: not attempted (already so, absent, ...).
enum class TuneStatus { kApplied, kRefused, kSkipped };

/// "applied", "refused", "skipped".
std::string_view TuneStatusName(TuneStatus status);

/// One tuning of one file, or a note about one that could not be attempted.
struct TuneChange {
  std::string what;    ///< "cpufreq governor (CPUs 0-3)", "IRQ 27 affinity".
  std::string path;    ///< As on the machine, without the FsRoot prefix.
  std::string before;  ///< First line of the file before ("" when unread).
  std::string after;   ///< The value written (or that would have been).
  TuneStatus status = TuneStatus::kSkipped;
  std::string detail;         ///< Why refused or skipped: the errno text, "already performance".
  bool restored = false;      ///< kApplied and written back.
  std::string restore_error;  ///< Why writing `before` back failed.
};

/// The tunings of one run. Destroying it restores them.
class Tuning {
 public:
  /// Starts the guardian, then applies every tuning; one that fails is recorded in changes(),
  /// not returned. Errors only when the guardian or the journal is unusable, and then nothing
  /// was changed.
  static Expected<std::unique_ptr<Tuning>> Apply(const FsRoot& root, const TuneOptions& options);

  /// Release() (only in the process that applied: a forked child does nothing).
  ~Tuning();
  Tuning(const Tuning&) = delete;
  Tuning& operator=(const Tuning&) = delete;

  /// Writes every original back, newest first. Without `after_restore` it then lets the
  /// guardian go; with it, the guardian stays (writing nothing back) until Release(), so that
  /// a death before the caller's last record of the run still gets recorded, "restored by
  /// rtpulse". Idempotent: later calls return the first result. An error names the files that
  /// could not be restored.
  Status Restore();
  /// Restore() if not done, then lets the guardian go: call it once the run's record that says
  /// so is written (durably). Idempotent.
  void Release();

  const std::vector<TuneChange>& changes() const { return changes_; }
  bool restored() const { return restored_; }
  /// The guardian process while it watches (0 once it was let go: Restore() without
  /// `after_restore`, else Release()).
  pid_t guardian_pid() const;

  /// The changes as a JSON array, for result.json's "tuning".
  nlohmann::json ToJson() const;
  /// One line per change, for system_info.txt.
  std::string Describe() const;

 private:
  Tuning(FsRoot root, const TuneOptions& options, std::unique_ptr<TuneGuardian> guardian);
  void Add(TuneChange change, std::string original);
  void ApplyOne(TuneChange change);
  void WriteJournal(std::string_view state) const;
  void ReleaseGuardian();

  FsRoot root_;
  KernelFileWriter write_file_;
  std::string journal_path_;
  std::unique_ptr<TuneGuardian> guardian_;
  pid_t owner_pid_;
  bool marks_;  ///< after_restore given: the guardian outlives Restore() until Release().
  std::vector<TuneChange> changes_;
  std::vector<std::string> originals_;  ///< Exact file content before, by index of changes_.
  bool restored_ = false;
  bool released_ = false;
  Status restore_status_;
  std::string guardian_problem_;
};

/// --deepest-idle-state N: the idle states deeper than N off on `measured` CPUs, through a
/// Tuning that puts them back (nullptr when `deepest` is not given).
Expected<std::unique_ptr<Tuning>> LimitIdleStates(const FsRoot& root, std::optional<int> deepest,
                                                  const std::vector<int>& online,
                                                  const std::vector<int>& measured);

/// --deepest-idle-state's record once the states are back: restores `tuning`, lets its
/// guardian go and says "disabled for the run, then restored: ..." (or "NOT restored", or
/// "none disabled"); each refused change, each CPU without idle states and a failed restore
/// become a warning.
std::string RestoreIdleStates(Tuning& tuning, std::vector<std::string>& warnings);

}  // namespace rtpulse::sys
