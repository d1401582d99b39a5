#pragma once

// Two of cyclictest's ways to read a running measurement from outside (docs/latency.md,
// "Signals and live statistics"): the shared-memory file SIGUSR2 rewrites
// (/dev/shm/cyclictest<PID>, which rt-tests' get_cyclictest_snapshot reads) and the named pipe
// of -F/--fifo, which hands the status lines to every reader that opens it.

#include <string>
#include <vector>

#include "core/error.h"

namespace rtpulse::sys {

/// The shared-memory statistics file: created at the start of a run, rewritten on each
/// SIGUSR2, removed at the end (a killed run leaves it, as cyclictest's).
class SharedStats {
 public:
  /// Opens /cyclictest<PID> with shm_open; `name` overrides the name (tests). A failure is a
  /// warning in `warning`, and Write() then does nothing.
  explicit SharedStats(std::string name = "");
  ~SharedStats();
  SharedStats(const SharedStats&) = delete;
  SharedStats& operator=(const SharedStats&) = delete;

  /// Replaces the file's content with `text`.
  void Write(const std::string& text);
  /// Why the file could not be made, or "".
  const std::string& warning() const { return warning_; }
  /// The name given to shm_open ("/cyclictest1234").
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  int fd_ = -1;
  std::string warning_;
};

/// -F/--fifo PATH: a named pipe; each time a reader has it open, the status lines are written
/// to it and it is closed, so `cat PATH` prints them once.
class StatsFifo {
 public:
  /// Makes the pipe at `path`. A path that exists and is not a named pipe is refused (exit 2),
  /// never removed; a named pipe left there by an earlier run is replaced.
  static Expected<StatsFifo> Create(const std::string& path);
  StatsFifo(StatsFifo&& other) noexcept;
  StatsFifo& operator=(StatsFifo&&) = delete;
  StatsFifo(const StatsFifo&) = delete;
  StatsFifo& operator=(const StatsFifo&) = delete;
  /// Removes the pipe.
  ~StatsFifo();

  /// Writes `lines` (newline-terminated) if a reader has the pipe open; never blocks.
  void Offer(const std::vector<std::string>& lines) const;

 private:
  explicit StatsFifo(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace rtpulse::sys
