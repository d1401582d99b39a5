#pragma once

// The process that puts tuned kernel files back if rtpulse dies without doing it (SIGKILL, a
// crash, the OOM killer). Used by sys/tuning.cc; separate because everything its child runs
// must be safe after fork() in a multi-threaded process: system calls only, no allocation.

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace rtpulse::sys {

/// Writes `content` to the file at `path` (the FsRoot prefix already applied) as `echo VALUE >
/// FILE` does: open with O_TRUNC (never O_CREAT), write, close. Returns 0 or the errno.
/// Async-signal-safe, so the guardian can call it after fork().
int WriteKernelFile(const char* path, std::string_view content);

/// How tunings write files. Tests pass one that refuses some paths the way the kernel refuses
/// a per-CPU IRQ (EIO); it must stay async-signal-safe, since the guardian calls it too.
using KernelFileWriter = int (*)(const char* path, std::string_view content);

/// A forked child holding the original content of every file the parent changed. It blocks on
/// a socket; when that reaches end-of-file (or its parent is gone) without a "done" message
/// first, it writes every original back, newest first, and exits. After Handover() it writes
/// nothing back any more but still outlives the parent until Finish(), so a death between the
/// parent's own restore and its last result write is still recorded (after_restore runs then
/// with the parent's report).
class TuneGuardian {
 public:
  /// Forks the guardian and waits until it is ready. `housekeeping_cpus` (may be empty: leave
  /// the inherited affinity) keeps it off the measured CPUs. `after_restore` (may be empty):
  /// the arguments the guardian execs this program (/proc/self/exe) with once it has restored
  /// the files, so a full process (allocation allowed) can record what was restored; its
  /// stdin then reads one line per file, "ERRNO<TAB>PATH" (0: restored), after a first line
  /// "T<TAB>REALTIME_NS" (when the restore ended).
  static Expected<std::unique_ptr<TuneGuardian>> Start(
      KernelFileWriter writer, const std::vector<int>& housekeeping_cpus,
      const std::vector<std::string>& after_restore = {});
  /// Finish() if not done.
  ~TuneGuardian();
  TuneGuardian(const TuneGuardian&) = delete;
  TuneGuardian& operator=(const TuneGuardian&) = delete;

  /// Hands over `original`, the content of `path` before a change. Call it before writing the
  /// file, so a death between the two cannot lose the original. An error means the guardian is
  /// gone or full: then do not change the file.
  Status Remember(const std::string& path, std::string_view original);
  /// The parent has written the originals back itself; `report` is what after_restore is to
  /// read (the same format, see Start) should the parent die before Finish(). The guardian
  /// then writes no file back; Remember() is refused from here on. Once only.
  Status Handover(std::string_view report);
  /// The parent has written the originals back (and, after Handover(), its final result): the
  /// guardian exits without writing, and is reaped here. Idempotent. In a forked child of the
  /// parent it only closes the socket.
  Status Finish();
  pid_t pid() const { return pid_; }

 private:
  TuneGuardian(pid_t pid, int socket_fd, pid_t owner)
      : pid_(pid), socket_fd_(socket_fd), owner_pid_(owner) {}
  Status Send(std::string_view message);

  pid_t pid_;
  int socket_fd_;
  pid_t owner_pid_;  ///< The process that started it: only that one may say "done".
  size_t bytes_sent_ = 0;
  size_t records_sent_ = 0;
  bool handed_over_ = false;
  bool finished_ = false;
};

}  // namespace rtpulse::sys
