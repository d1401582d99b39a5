#pragma once

// What `rtpulse noise` measured (docs/noise.md), with its writers and its reader: the JSON
// document (oslat's `--json` layout, its `thread.N` objects in oslat's units, plus an `rtpulse`
// block with every figure exact, in ns), oslat's text form, rtpulse's summary table and the
// events file (one line per noise event).
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace rtpulse::results {

/// Where noise went (--explain), the kinds of trace::CauseKind in its order, named for a
/// running poller: "irq", "softirq", "thread" (another task held the CPU), "switch-in" (the
/// poller's own time back to its loop after such a task), "idle", "unaccounted" (the poller
/// was current and ran nothing of its own: NMI, SMI, firmware, the VM's host).
inline constexpr size_t kNoiseCauseKinds = 6;
std::string_view NoiseCauseKindName(size_t kind);

struct NoiseEventRow {
  int64_t start_ns = 0;  ///< CLOCK_MONOTONIC of the read before the gap.
  int64_t gap_ns = 0;
  /// --explain: the gap split by kind (NoiseCauseKindName order; sums to gap_ns), and the
  /// largest part's name. Absent: not explained (beyond the cap, or no trace).
  std::optional<std::array<int64_t, kNoiseCauseKinds>> kind_ns;
  std::string largest;
};

/// One (kind, name) cause over a CPU's explained events.
struct NoiseCauseRow {
  std::string kind;  ///< NoiseCauseKindName.
  std::string name;  ///< e.g. "irq 11 arch_timer", "stress-ng 1234 rt 50", "unaccounted".
  int64_t ns = 0;
  uint64_t events = 0;  ///< Explained events it took part in.
  int64_t max_ns = 0;   ///< Its largest share of one event.
};

/// --explain on one CPU: its events attributed from the kernel trace.
struct NoiseCauses {
  uint64_t explained = 0;
  uint64_t not_explained = 0;  ///< Events beyond the explain cap or the trace's reach.
  uint64_t incomplete = 0;     ///< Explained with a hole in the trace (its time: unaccounted).
  int64_t explained_ns = 0;    ///< The explained events' gaps, summed.
  /// Per kind (NoiseCauseKindName order): time and explained events with a part of it.
  std::array<int64_t, kNoiseCauseKinds> kind_ns{};
  std::array<uint64_t, kNoiseCauseKinds> kind_events{};
  std::vector<NoiseCauseRow> rows;  ///< Largest total first.
};

/// One CPU's poller.
struct NoiseCpu {
  int cpu = -1;
  int tid = 0;
  int64_t duration_ns = 0;  ///< From its first read to its last.
  uint64_t gaps = 0;        ///< Gaps measured (clock reads - 1).
  int64_t min_gap_ns = 0;
  int64_t max_gap_ns = 0;
  /// Bucket k: the gaps in (k * width, (k + 1) * width] (0 in bucket 0); the last bucket also
  /// holds every longer gap.
  std::vector<uint64_t> histogram;
  uint64_t events = 0;                ///< Gaps above the threshold: noise.
  int64_t noise_ns = 0;               ///< Their sum.
  std::vector<NoiseEventRow> kept;    ///< The events kept, in time order (the events file).
  uint64_t events_not_kept = 0;       ///< Beyond the kept list: counted, not listed.
  bool stopped_above = false;         ///< -T: this CPU saw the gap that stopped the run.
  std::optional<NoiseCauses> causes;  ///< --explain with the trace running.

  /// 100 x (1 - noise / duration): the share of the CPU the loop got (0 for no duration).
  double AvailablePercent() const;
  /// Noise per second of run, in ns.
  double NoisePerSecondNs() const;
  /// duration / gaps: the loop's mean iteration, the smallest gap it can see on average.
  double MeanGapNs() const;
};

struct NoiseRun {
  std::string rtpulse_version;
  std::string cmdline;
  int64_t start_realtime_ns = 0;
  int64_t start_monotonic_ns = 0;  ///< CLOCK_MONOTONIC at start_realtime_ns (events' clock).
  int64_t end_realtime_ns = 0;
  std::string policy;  ///< "fifo", "other", ...
  int priority = 0;
  int64_t threshold_ns = 0;
  int64_t bucket_width_ns = 0;
  int64_t duration_planned_ns = 0;  ///< 0: until interrupted.
  int64_t stop_above_ns = 0;        ///< -T; 0: off.
  bool explain = false;             ///< --explain was asked (each CPU's causes, if traced).
  bool interrupted = false;
  std::string kernel;  ///< uname's release and version.
  std::string machine;
  bool realtime_kernel = false;
  std::vector<std::string> warnings;
  std::vector<NoiseCpu> cpus;
};

nlohmann::json ToJson(const NoiseRun& run);
/// The run from its JSON document (the `rtpulse` block); a missing or mistyped field is a
/// usage error naming it. The events are not in the document: `kept` stays empty.
Expected<NoiseRun> NoiseRunFromJson(const nlohmann::json& doc);
/// oslat's text: per CPU its bucket lines, Minimum, Average, Maximum, Max-Min, Duration.
std::string FormatOslatText(const NoiseRun& run);
/// rtpulse's table: per CPU the gaps, largest gap, events, noise per second, % available.
std::string FormatNoiseSummary(const NoiseRun& run);
/// The events file: "cpu,start_ns,gap_ns", one line per kept event; with --explain also each
/// kind's ns (empty when the event was not explained) and the largest part's name, quoted.
std::string FormatNoiseEvents(const NoiseRun& run);

}  // namespace rtpulse::results
