// What --explain found, as result.json and the latency JSON carry it ("explain" object,
// docs/result-json.md#explain). Plain data in results' own types; suite/explain_record.h
// turns trace::ExplainSummary into it, report reads it back.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace rtpulse::results {

struct ExplainPart {
  std::string kind;  ///< "irq", "softirq", "thread", "wake", "idle", "unaccounted".
  std::string name;  ///< e.g. "irq 45 eth0", "NET_RX in ktimers/2", "stress 1234 fifo 90".
  int64_t ns = 0;
  uint32_t count = 0;
};

struct SpikeExplanation {
  int thread = 0;
  int cpu = 0;
  uint64_t seq = 0;
  int64_t expected_ns = 0;
  int64_t latency_ns = 0;  ///< Lateness; the parts' ns add up to it.
  std::string chain;       ///< "direct", "deferred", "cross-cpu", "unknown".
  std::string chain_thread;
  int probe_tid = 0;
  bool complete = true;
  std::string incomplete_reason;
  std::string verdict;  ///< The one-line verdict as printed.
  std::vector<ExplainPart> parts;
  std::string window_file;  ///< Relative to the result folder; "" = not saved.
  int64_t explained_after_ns = 0;
};

struct ExplainCause {
  std::string kind;
  std::string name;
  int64_t total_ns = 0;
  uint64_t spikes = 0;
  int64_t max_ns = 0;
};

struct ExplainCostResult {
  uint64_t samples_without = 0, samples_with = 0;
  int64_t p50_without_ns = 0, p99_without_ns = 0;
  int64_t p50_with_ns = 0, p99_with_ns = 0;
};

/// One wake path's probe threads as the engine published them (docs/explain.md#probe-tids).
struct ExplainProbeThreads {
  std::string wake;
  std::vector<int> tids;         ///< Index = probe thread (T: N).
  std::vector<int> helper_tids;  ///< The wake path's helper threads (xthread waker, ...).
};

struct ExplainResult {
  int64_t threshold_ns = 0;
  bool active = false;
  std::string unavailable_reason;
  uint64_t spikes_seen = 0, spikes_explained = 0, spikes_not_explained = 0;
  std::vector<SpikeExplanation> spikes;
  std::vector<ExplainCause> causes_by_time;
  std::vector<ExplainCause> causes_by_count;
  // The trace that ran.
  std::string instance;
  /// --explain-events: "lean" (the attribution's events) or "full"; files written before the
  /// option existed have no such field and traced the full set.
  std::string event_set = "lean";
  std::vector<std::string> events_enabled, events_missing;
  uint64_t events_read = 0, events_lost = 0;
  int64_t reader_cpu_ns = 0;
  /// The raw_syscalls filter in force ("common_pid == 12 || ..."); "" = no syscall traced,
  /// and syscall_note says why. Files from before these fields have neither.
  std::string syscall_filter;
  std::string syscall_note;
  std::vector<ExplainProbeThreads> probe_tids;
  std::optional<ExplainCostResult> cost;
  std::vector<std::string> notes;
};

nlohmann::json ExplainToJson(const ExplainResult& explain);
/// Every field checked; a bad one names its JSON path (exit 2 through the reader).
Expected<ExplainResult> ExplainFromJson(const nlohmann::json& json);

}  // namespace rtpulse::results
