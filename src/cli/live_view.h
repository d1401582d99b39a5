#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "measure/engine.h"
#include "sys/stats_outlets.h"

namespace rtpulse::cli {

/// How progress is shown while a run measures.
enum class LiveMode {
  kTty,    ///< Redraw one line per thread plus an ETA, a few times a second.
  kPlain,  ///< Append plain lines every few seconds (stdout is a pipe or a file).
  kOff,    ///< -q or -v: nothing.
};

/// The latency command's observer: the live view, SIGUSR1's and SIGUSR2's statistics and the
/// -F named pipe.
class LiveView final : public measure::RunObserver {
 public:
  LiveView(LiveMode mode, std::FILE* out, bool nsecs, int64_t duration_ns, uint64_t loops,
           std::vector<std::string> path_names);

  /// -M (cyclictest's --refresh_on_max): redraw only when a thread's maximum grew.
  void RefreshOnMax() { refresh_on_max_ = true; }
  /// SIGUSR2 rewrites `stats` (null: SIGUSR2 does nothing).
  void ShareStats(sys::SharedStats* stats) { shared_ = stats; }
  /// -F: every tick offers the status lines to `fifo`'s reader (null: none).
  void ServeFifo(const sys::StatsFifo* fifo) { fifo_ = fifo; }

  void OnPathStart(size_t path_index, measure::WakePath path) override;
  bool WantsTicks() const override { return mode_ != LiveMode::kOff || fifo_ != nullptr; }
  void OnTick(const std::vector<measure::LiveProbe>& probes, int64_t elapsed_ns) override;
  /// SIGUSR1: cyclictest's "current status" block on standard error; SIGUSR2: the same block
  /// into the shared-memory file.
  void OnStatsRequest(const std::vector<measure::LiveProbe>& probes,
                      measure::StatsRequest request) override;
  /// A line from another thread (--explain's verdicts) on `stream`: on a terminal the live
  /// lines are cleared first and redrawn below it at the next tick, so neither overwrites
  /// the other.
  void Note(std::FILE* stream, const std::string& line);

  /// One line per thread as the live view shows it: cyclictest's status line, then rtpulse's
  /// P99 and missed periods.
  std::vector<std::string> Lines(const std::vector<measure::LiveProbe>& probes) const;
  /// cyclictest's status lines alone (SIGUSR1, SIGUSR2, -F).
  std::vector<std::string> StatusLines(const std::vector<measure::LiveProbe>& probes) const;
  /// "ETA 00:01:23" style remaining time, or "" when the run has no fixed end.
  std::string Eta(const std::vector<measure::LiveProbe>& probes, int64_t elapsed_ns) const;

 private:
  LiveMode mode_;
  std::FILE* out_;
  bool nsecs_;
  int64_t duration_ns_;
  uint64_t loops_;
  std::vector<std::string> path_names_;
  size_t path_index_ = 0;
  size_t drawn_lines_ = 0;
  int64_t last_plain_ns_ = -1;
  bool refresh_on_max_ = false;
  std::vector<int64_t> drawn_max_;  ///< -M: each thread's maximum when last drawn.
  sys::SharedStats* shared_ = nullptr;
  const sys::StatsFifo* fifo_ = nullptr;
  std::mutex mutex_;  // OnTick (engine thread) against Note (the explainer's thread)
};

/// TTY on stdout -> kTty, otherwise kPlain; quiet/verbose -> kOff.
LiveMode ChooseLiveMode(bool quiet, bool verbose);

}  // namespace rtpulse::cli
