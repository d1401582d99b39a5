#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "e2e/actuation.h"
#include "e2e/frame_source.h"
#include "e2e/inference.h"
#include "e2e/processing.h"

// The pipeline run of `rtpulse e2e` (docs/e2e.md, "Modes", "Threads"): a capture thread reads
// frames from the source; an inference thread preprocesses, infers, postprocesses, decides and
// actuates, timing each stage of each frame with CLOCK_MONOTONIC into a preallocated record.
namespace rtpulse::e2e {

/// Scheduling of one pipeline thread, as in `latency`: policy "other", "fifo" or "rr",
/// priority (1..99 for fifo/rr), CPUs (empty: not pinned).
struct ThreadSpec {
  std::string policy = "other";
  int priority = 0;
  std::vector<int> cpus;
};

enum class PipelineMode {
  kBackToBack,  ///< Each frame is read when the previous one is done (the seed's loop).
  kPeriodic,    ///< Frames released at --fps; a frame not taken before the next is dropped.
};

struct PipelineSettings {
  PipelineMode mode = PipelineMode::kBackToBack;
  double fps = 0;               ///< Periodic: frame rate of the releases (0: the source's own).
  int64_t deadline_ns = 0;      ///< Periodic: a frame misses when alert_ns - capture_ns > it
                                ///< (0: one frame period). Back-to-back: 0 = none.
  uint64_t frames = 1000;       ///< Frames to record (the seed's 1,000 samples).
  uint64_t warmup_frames = 10;  ///< Run through the whole pipeline first, not recorded.
  int64_t loopback_timeout_ns = 100'000'000;
  /// Each frame's references from the source (FrameSource::FillReferences, called by the
  /// capture thread right after the frame into the frame's slot) go to
  /// Postprocessor::SetReferences before that frame's postprocess, when the source has some;
  /// false: the postprocessor keeps what it was prepared with. (The synthetic source fills in
  /// place: no allocation once the slots have the capacity.)
  bool per_frame_references = true;
  ThreadSpec capture;
  ThreadSpec inference;  ///< Applied to the backend's worker-pool threads too.
  /// ListProcessThreads() taken before the process's first backend Load (a backend's worker
  /// pool outlives it: OpenCV's is process-wide): the threads that appear between then and the
  /// end of the warm-up, other than the pipeline's two and the caller, are the backend's
  /// workers. Unset: the list at RunPipeline's start (workers made by Load are then not found,
  /// and a note says so).
  std::optional<std::vector<int>> threads_before_backend;
  /// Called in the capture and in the inference thread right before their first recorded
  /// frame and right after their last (tests count allocations in between).
  std::function<void()> before_loop;
  std::function<void()> after_loop;
};

/// One frame through the pipeline (CLOCK_MONOTONIC ns). Stages: capture = read_end - capture,
/// queue = infer_start - read_end, preprocess = pre_end - infer_start, inference =
/// inference_end - pre_end, postprocess = post_end - inference_end, decision->alert =
/// alert - post_end; total = alert_ns - capture_ns (the frame's capture time to the alert
/// written), which misses are judged on.
struct FrameRecord {
  uint64_t index = 0;       ///< 0.. in recording order.
  uint64_t source_seq = 0;  ///< CapturedFrame::seq.
  int64_t release_ns = 0;   ///< Periodic: the frame's slot; back-to-back: when it was asked for.
  /// Source without a driver timestamp (TimestampSource::kRead): release_ns, the frame exists
  /// at its release, so the capture thread's wake-up and hand-off are in Capture and Total.
  /// Driver-stamped: CapturedFrame::capture_ns as the driver gave it (may lie before
  /// release_ns: a frame queued in the driver).
  int64_t capture_ns = 0;
  int64_t read_end_ns = 0;
  int64_t infer_start_ns = 0;  ///< Inference thread took the frame (after any queue wait).
  int64_t pre_end_ns = 0;
  int64_t inference_end_ns = 0;
  int64_t post_end_ns = 0;      ///< Postprocess and decision done.
  int64_t alert_ns = 0;         ///< Alert sink returned.
  int64_t edge_ns = -1;         ///< Loopback edge's kernel timestamp; -1: no change or no loopback.
  uint32_t dropped_before = 0;  ///< Frames released but never processed since the previous one.
  uint32_t lost_before = 0;     ///< Frames the driver lost (CapturedFrame::lost_before).
  bool obstacle = false;
  bool changed = false;
  bool miss = false;
  double roi_depth_m = 0;
};

/// A pipeline thread as checked afterwards in /proc/self/task/TID (stat, status).
struct ThreadCheck {
  int tid = 0;
  std::string name;    ///< comm.
  std::string role;    ///< "capture", "inference", "worker".
  std::string policy;  ///< As the kernel reports it.
  int priority = 0;
  std::string cpus;  ///< Cpus_allowed_list.
  bool as_asked = true;
  std::string note;  ///< What differs, when !as_asked.
};

struct PipelineResult {
  std::vector<FrameRecord> frames;
  uint64_t released = 0;  ///< Frames released (periodic) or read (back-to-back).
  uint64_t dropped = 0;
  uint64_t lost = 0;
  uint64_t misses = 0;
  uint64_t loopback_timeouts = 0;
  int64_t period_ns = 0;    ///< Periodic on a timer: the release period; 0 otherwise.
  int64_t deadline_ns = 0;  ///< The deadline misses were counted against; 0: none (not counted).
  int64_t start_ns = 0;     ///< The first recorded frame's release_ns.
  int64_t end_ns = 0;       ///< The last recorded frame's alert_ns (or its loopback edge).
  bool interrupted = false;
  bool source_ended = false;  ///< A finite source ran out before `frames`.
  std::vector<ThreadCheck> threads;
  /// The backend's worker threads seen in /proc/self/task after the warm-up (threads that
  /// appeared since PipelineSettings::threads_before_backend, other than the pipeline's and
  /// the caller's): the inference threads known to run are workers_seen + 1 (the inference
  /// thread). -1: not known (threads_before_backend not given).
  int workers_seen = -1;
  std::vector<std::string> notes;
  /// A stage failed mid-run (a source read, a stage's Run, the alert, the loopback): its
  /// message, naming the stage; `frames` holds the frames recorded before it. Empty: none.
  std::string error;
  /// Frames completed per second: (frames - 1) / (last frame's alert_ns - first frame's
  /// alert_ns), the rate of the intervals between alerts; 0 when not measurable (fewer than
  /// 2 frames).
  double ThroughputFps() const;
};

/// The stages, owned by the caller, opened and prepared before the run.
struct PipelineStages {
  FrameSource* source = nullptr;
  Preprocessor* preprocess = nullptr;
  InferenceBackend* inference = nullptr;
  Postprocessor* postprocess = nullptr;
  AlertSink* alert = nullptr;    ///< May be null (no alert).
  Loopback* loopback = nullptr;  ///< May be null.
};

/// The thread ids of this process now (/proc/self/task of FsRoot::Live()), sorted.
std::vector<int> ListProcessThreads();

/// Runs the pipeline until `settings.frames` are recorded, the source ends, or `stop` is set
/// (then interrupted, with the frames so far). Errors (nothing recorded): bad settings (usage),
/// a finite source that ends before the first recorded frame, used up by the warm-up (usage:
/// names the frames it had, --warmup and the fix), a thread's scheduling refused (resource,
/// names the option). A stage failing mid-run is no
/// error of this function: the result carries it in `error`, with the frames so far.
/// `on_frame`, if set, is called from the calling (non-RT) thread with the number of frames
/// recorded so far (progress), about every 100 ms.
Expected<PipelineResult> RunPipeline(const PipelineSettings& settings, PipelineStages& stages,
                                     std::atomic<bool>& stop,
                                     const std::function<void(uint64_t)>& on_frame = {});

}  // namespace rtpulse::e2e
