#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

// The files `rtpulse e2e` leaves in each scenario folder (docs/e2e.md, "Output files"), and
// the reader of the per-frame log:
//   e2e_inference_latency.csv  the seed's CSV: Sample,Total,Preproc,Inference,Postproc in ms,
//                              then Capture,DecisionToAlert (ms, 6 decimals: exact ns)
//   frames.csv                 every field of every frame (ns), the derived stages beside them
//   e2e_statistics.txt         the seed's statistics per stage and for Total, and the counts
// `results` may not see `e2e` (docs/architecture.md): E2eFrameRow mirrors e2e::FrameRecord
// field for field, and the suite's e2e workload copies one into the other.
namespace rtpulse::results {

/// One frame of the pipeline (CLOCK_MONOTONIC ns), as e2e::FrameRecord holds it.
struct E2eFrameRow {
  uint64_t index = 0;
  uint64_t source_seq = 0;
  int64_t release_ns = 0;
  int64_t capture_ns = 0;
  int64_t read_end_ns = 0;
  int64_t infer_start_ns = 0;
  int64_t pre_end_ns = 0;
  int64_t inference_end_ns = 0;
  int64_t post_end_ns = 0;
  int64_t alert_ns = 0;
  int64_t edge_ns = -1;  ///< -1: no loopback edge for this frame.
  uint32_t dropped_before = 0;
  uint32_t lost_before = 0;
  bool obstacle = false;
  bool changed = false;
  bool miss = false;
  double roi_depth_m = 0;  ///< NaN: not known (no fit, no valid ROI value, timing only).
};

/// The stages of one frame (ns), docs/e2e.md "Columns":
///   capture = read_end - capture              (driver timestamp or read start to decoded)
///   queue = infer_start - read_end            (waiting for the inference thread)
///   preproc = pre_end - infer_start
///   inference = inference_end - pre_end
///   postproc = post_end - inference_end       (fit, ROI, decision)
///   decision_to_alert = alert - post_end      (the alert sink's write)
///   total = alert - capture = the sum of the six above
///   decision_to_edge = edge - post_end        (loopback only; -1 when there is no edge)
struct E2eStages {
  int64_t capture_ns = 0;
  int64_t queue_ns = 0;
  int64_t preproc_ns = 0;
  int64_t inference_ns = 0;
  int64_t postproc_ns = 0;
  int64_t decision_to_alert_ns = 0;
  int64_t total_ns = 0;
  int64_t decision_to_edge_ns = -1;
};

/// The stages of `row`; a Failure naming the frame when one of rtpulse's own timestamps lies
/// before the previous stage's (a bug upstream, never clamped to 0). capture_ns is the source's
/// stamp (a driver's, where it gives one): it may lie after read_end_ns, and Capture and Total
/// are then negative or short, as measured (e2e_statistics.txt counts such frames).
Expected<E2eStages> StagesOf(const E2eFrameRow& row);

/// The seed's CSV header, exactly; the columns are ms with 6 decimals (whole ns, printed
/// from the integers without floating point). Sample counts from 1, as the seed's did.
inline constexpr const char* kE2eLatencyHeader =
    "Sample,Total,Preproc,Inference,Postproc,Capture,DecisionToAlert";
/// frames.csv's header: the record's fields, then the derived stages (ns).
inline constexpr const char* kE2eFramesHeader =
    "index,source_seq,release_ns,capture_ns,read_end_ns,infer_start_ns,pre_end_ns,"
    "inference_end_ns,post_end_ns,alert_ns,edge_ns,dropped_before,lost_before,obstacle,changed,"
    "miss,roi_depth_m,capture_stage_ns,queue_ns,preproc_ns,inference_ns,postproc_ns,"
    "decision_to_alert_ns,total_ns";

/// ns as ms with six decimals, exactly: 1234567 -> "1.234567", -5 -> "-0.000005".
std::string E2eMsText(int64_t ns);
/// A nearest-rank percentile as E2eMsText, or "n/a" below the count it needs
/// (MinCountForPercentile in results/control_result.h: 10 frames for p90, 100 for p99;
/// below it the value is the maximum, not a percentile).
std::string E2ePercentileText(int64_t value_ns, double percentile, uint64_t count);
/// Frames completed per second, as e2e::PipelineResult::ThroughputFps: (frames - 1) / (the
/// last frame's alert_ns - the first's), the rate of the intervals between alerts; nullopt
/// below 2 frames (no rate is known).
std::optional<double> E2eThroughputFps(const std::vector<E2eFrameRow>& rows);

std::string FormatE2eLatencyCsv(const std::vector<E2eFrameRow>& rows);
std::string FormatFrameLog(const std::vector<E2eFrameRow>& rows);
/// Written atomically (core/atomic_file.h); a row StagesOf refuses is the Failure.
Status WriteE2eLatencyCsv(const std::string& path, const std::vector<E2eFrameRow>& rows);
Status WriteFrameLog(const std::string& path, const std::vector<E2eFrameRow>& rows);
/// Reads frames.csv back, checking every field: integers, flags 0 or 1, a finite depth,
/// timestamps in stage order, every derived column equal to its rule, index increasing. A
/// malformed line is a usage error naming FILE:LINE, the column and the value.
Expected<std::vector<E2eFrameRow>> ReadFrameLog(const std::string& path);

/// The seed's statistics of one stage over the recorded frames: count, mean, standard
/// deviation (population, divisor n, as numpy's std), min, max and the p50, p90, p99 by
/// nearest rank (rank ceil(p/100 n) of the sorted values), all ns.
struct E2eStageStats {
  uint64_t count = 0;
  double mean_ns = 0;
  double std_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  int64_t p50_ns = 0;
  int64_t p90_ns = 0;
  int64_t p99_ns = 0;
};
/// Usage error on no values.
Expected<E2eStageStats> ComputeE2eStageStats(std::vector<int64_t> values_ns);

/// The stage names in e2e_statistics.txt's order.
inline constexpr const char* kE2eStageNames[] = {"Total",           "Capture",       "Queue",
                                                 "Preproc",         "Inference",     "Postproc",
                                                 "DecisionToAlert", "DecisionToEdge"};
/// The values of stage `name` (one of kE2eStageNames) over `rows` (DecisionToEdge: only the
/// frames with an edge). Rows must pass StagesOf.
std::vector<int64_t> StageValues(const std::vector<E2eFrameRow>& rows, const std::string& name);

/// What a scenario adds beyond the frames, for e2e_statistics.txt.
struct E2eRunFacts {
  std::string scenario;
  std::string configuration;  ///< e.g. "threads 2, loaded (cpu:2)".
  std::string mode;           ///< "back-to-back" or "periodic".
  double fps = 0;             ///< Periodic.
  int64_t deadline_ns = 0;    ///< 0: none.
  uint64_t released = 0;
  uint64_t dropped = 0;
  uint64_t lost = 0;
  uint64_t misses = 0;
  uint64_t loopback_timeouts = 0;
  int64_t start_ns = 0;  ///< The pipeline's run, for the throughput.
  int64_t end_ns = 0;
  std::string backend_name;
  std::string backend_why;
  int threads_asked = 0;
  int backend_threads = 0;  ///< -1: the runtime decides (not known).
  /// When the backend does not know its count (-1): the backend's worker threads seen in
  /// /proc/self/task (PipelineResult::workers_seen), so used = workers_seen + 1 (the
  /// inference thread); -1: not seen either.
  int workers_seen = -1;
  std::string source;
  std::string timestamp_source;
  std::string model;
  bool interrupted = false;
  bool source_ended = false;
  std::vector<std::string> notes;
};

/// e2e_statistics.txt: the stages' statistics (ms, 6 decimals), throughput, the counts, the
/// backend and the notes. Rows must pass StagesOf.
std::string FormatE2eStatistics(const std::vector<E2eFrameRow>& rows, const E2eRunFacts& facts);
Status WriteE2eStatistics(const std::string& path, const std::vector<E2eFrameRow>& rows,
                          const E2eRunFacts& facts);

}  // namespace rtpulse::results
