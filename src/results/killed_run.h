#pragma once

// A suite run that was killed (SIGKILL, the OOM killer, a power cut): result.json keeps the
// last checkpoint's `status: running`. The tuning guardian that outlives rtpulse marks it
// `killed` after restoring the tunings (MarkKilled); readers that find a `running` whose
// writer is gone read it as killed and say so (StaleRunningNote). docs/result-json.md.

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace rtpulse::results {

/// The hidden command the guardian execs rtpulse with: `rtpulse __mark-killed RESULT PID`,
/// the guardian's report (sys/tuning_guardian.h, after_restore) on stdin.
inline constexpr const char* kMarkKilledCommand = "__mark-killed";

/// The arguments for sys::TuneOptions::after_restore: mark `result_path` killed once the
/// guardian of the process `pid` restored its tunings.
std::vector<std::string> MarkKilledArgs(const std::string& result_path, pid_t pid);

/// One file the guardian wrote back: 0 or the errno of the write.
struct GuardianRestore {
  std::string path;  ///< With the FsRoot prefix, as the guardian wrote it.
  int error = 0;
};
struct GuardianReport {
  int64_t restored_realtime_ns = 0;  ///< When the restore ended.
  /// Who wrote the files back: "guardian", or "rtpulse" when rtpulse restored them itself and
  /// died before its final result (the guardian passes rtpulse's own report on).
  std::string restored_by = "guardian";
  std::vector<GuardianRestore> files;
};
/// The guardian's stdin text ("T\tNS", optionally "B\tWHO", then "ERRNO\tPATH" lines).
/// Errors name the bad line.
Expected<GuardianReport> ParseGuardianReport(std::string_view text);

/// Marks `result_path` killed: status "killed", updated_time and a `killed` record, and every
/// applied tuning record (`tuning`, and the blocks' of `tune_ab`) the report names gets
/// `restored: true` with `restored_by` and `restored_time` (or its `restore_error`). Written
/// atomically; a result that is no longer "running" (the run finished meanwhile) or that another
/// process wrote is left alone. Returns what was done, one line.
Expected<std::string> MarkKilled(const std::string& result_path, pid_t pid,
                                 const GuardianReport& report);

/// The process writing a result.json, for result.json's `writer`: {pid, boot_id,
/// start_ticks} (start_ticks: /proc/PID/stat's start time, which tells a reused pid apart).
nlohmann::json CurrentWriter();

/// For a result.json whose status is "running": the note a reader prints when the run is not
/// really running (its writer process is gone, or, without a `writer` record, its
/// updated_time is older than the checkpoint interval + the longest settle + 60 s); nullopt
/// when it may still be running. `now_ns`: CLOCK_REALTIME.
std::optional<std::string> StaleRunningNote(const nlohmann::json& result, int64_t now_ns);

/// The note readers print for a run marked killed by its guardian (status "killed"); "" for
/// any other status.
std::string KilledNote(const nlohmann::json& result);

}  // namespace rtpulse::results
