// The two-thread pipeline of `rtpulse e2e` (src/e2e/pipeline.h) on the real OpenCV backend and
// depth-tiny.onnx, against injected ground truth: a source sleeping a known time per read and
// stamping known capture times, added work of a known least duration, the absolute release grid,
// and scheduling read back from the kernel independently of the pipeline's own check.
#include "e2e/pipeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "e2e/pipeline_support.h"
#include "e2e/worker_threads.h"

namespace rtpulse::e2e {
namespace {

using pipetest::RealStages;
using pipetest::SlowBackend;

/// The chain every recorded frame must satisfy, whatever the timing.
void ExpectMonotonic(const PipelineResult& result) {
  for (const FrameRecord& r : result.frames) {
    SCOPED_TRACE(::testing::Message() << "frame " << r.index);
    EXPECT_LE(r.capture_ns, r.read_end_ns);
    EXPECT_LE(r.release_ns, r.read_end_ns);
    EXPECT_LE(r.read_end_ns, r.infer_start_ns);
    EXPECT_LE(r.infer_start_ns, r.pre_end_ns);
    EXPECT_LE(r.pre_end_ns, r.inference_end_ns);
    EXPECT_LE(r.inference_end_ns, r.post_end_ns);
    EXPECT_LE(r.post_end_ns, r.alert_ns);
  }
  for (size_t i = 0; i < result.frames.size(); ++i) EXPECT_EQ(result.frames[i].index, i);
}

TEST(PipelineTest, BackToBackReadsWhenAskedAndTheCaptureStageCoversTheRead) {
  RealStages real;
  real.Load(1);
  real.source.sleep_ns = 3 * kNsPerMs;
  PipelineSettings settings;
  settings.frames = 25;
  settings.warmup_frames = 4;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  uint64_t last_progress = 0;
  auto result = RunPipeline(settings, stages, stop, [&](uint64_t n) { last_progress = n; });
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_TRUE(result->error.empty()) << result->error;
  ASSERT_EQ(result->frames.size(), 25u);
  EXPECT_EQ(last_progress, 25u);
  EXPECT_EQ(result->released, 25u);
  EXPECT_EQ(result->dropped, 0u);
  EXPECT_EQ(result->misses, 0u);  // Back-to-back without a deadline: none, and said so.
  EXPECT_EQ(result->deadline_ns, 0);
  EXPECT_EQ(result->period_ns, 0);
  bool said = false;
  for (const std::string& note : result->notes) said |= note.find("no deadline") == 0;
  EXPECT_TRUE(said);
  EXPECT_FALSE(result->interrupted);
  EXPECT_FALSE(result->source_ended);
  ExpectMonotonic(*result);
  for (size_t i = 0; i < result->frames.size(); ++i) {
    const FrameRecord& r = result->frames[i];
    EXPECT_EQ(r.source_seq, 4 + i);  // The warm-up read frames 0..3, unrecorded.
    // No driver timestamp: the frame exists at its ask, so Capture covers the hand-off to
    // the capture thread and the read (which began at stamps[seq], after the ask).
    EXPECT_EQ(r.capture_ns, r.release_ns);
    EXPECT_LE(r.release_ns, real.source.stamps[r.source_seq]);
    EXPECT_GE(r.read_end_ns - r.capture_ns,
              real.source.sleep_ns + (real.source.stamps[r.source_seq] - r.release_ns));
    EXPECT_EQ(r.dropped_before, 0u);
    // Back-to-back: the frame is asked for after the previous frame's alert, and read after.
    if (i > 0) {
      EXPECT_GE(r.release_ns, result->frames[i - 1].alert_ns);
    }
    EXPECT_GE(r.capture_ns, r.release_ns);
    EXPECT_EQ(r.edge_ns, -1);
  }
  EXPECT_EQ(result->start_ns, result->frames.front().release_ns);
  EXPECT_EQ(result->end_ns, result->frames.back().alert_ns);
  EXPECT_DOUBLE_EQ(
      result->ThroughputFps(),
      24.0 * 1e9 /
          static_cast<double>(result->frames.back().alert_ns - result->frames.front().alert_ns));
}

TEST(PipelineTest, PeriodicReadStampedFramesAreCapturedAtTheirGridPoint) {
  // A source without a driver timestamp: the frame's capture time is its release on the
  // grid, so the capture thread's wake-up after the release is in Capture and in Total, and
  // misses are judged on alert - release.
  RealStages real;
  real.Load(1);
  real.source.sleep_ns = 2 * kNsPerMs;
  PipelineSettings settings;
  settings.mode = PipelineMode::kPeriodic;
  settings.fps = 50;
  settings.deadline_ns = 4 * kNsPerMs;
  settings.frames = 20;
  settings.warmup_frames = 2;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->frames.size(), 20u);
  ExpectMonotonic(*result);
  const int64_t period_ns = 20 * kNsPerMs;
  const int64_t grid0 = result->frames.front().release_ns;
  uint64_t misses = 0;
  for (const FrameRecord& r : result->frames) {
    EXPECT_EQ(r.capture_ns, r.release_ns);
    EXPECT_EQ((r.release_ns - grid0) % period_ns, 0) << "a grid point";
    // The read began after the release (the wake-up), and Capture covers it and the read.
    EXPECT_GE(real.source.stamps[r.source_seq], r.release_ns);
    EXPECT_GE(r.read_end_ns - r.capture_ns,
              (real.source.stamps[r.source_seq] - r.release_ns) + real.source.sleep_ns);
    const bool miss = r.alert_ns - r.release_ns > settings.deadline_ns;
    EXPECT_EQ(r.miss, miss);
    misses += miss ? 1 : 0;
  }
  EXPECT_EQ(result->misses, misses);
}

TEST(PipelineTest, ThroughputIsTheRateOfTheIntervalsBetweenAlerts) {
  // Injected timestamps: 15 frames at 5 fps released on a 200 ms grid, each alerted 30 ms
  // after its release: 14 intervals over 2.8 s = 5 frames/s exactly, whatever the latency.
  PipelineResult result;
  for (int i = 0; i < 15; ++i) {
    FrameRecord r;
    r.index = static_cast<uint64_t>(i);
    r.release_ns = 1'000 * kNsPerMs + i * 200 * kNsPerMs;
    r.capture_ns = r.release_ns;
    r.alert_ns = r.release_ns + 30 * kNsPerMs;
    result.frames.push_back(r);
  }
  result.start_ns = result.frames.front().release_ns;
  result.end_ns = result.frames.back().alert_ns;
  EXPECT_DOUBLE_EQ(result.ThroughputFps(), 5.0);
  result.frames[14].alert_ns += 700 * kNsPerMs;  // The last frame late: 14 / 3.5 s.
  EXPECT_DOUBLE_EQ(result.ThroughputFps(), 4.0);
  result.frames.resize(1);
  EXPECT_EQ(result.ThroughputFps(), 0) << "one frame: no interval, not measurable";
  result.frames.clear();
  EXPECT_EQ(result.ThroughputFps(), 0);
}

TEST(PipelineTest, ASourceUsedUpByTheWarmUpIsAUsageErrorNamingTheFix) {
  for (const int64_t frames : {5, 10}) {
    SCOPED_TRACE(::testing::Message() << frames << " frames");
    RealStages real;
    real.Load(1);
    real.source.frames = frames;
    PipelineSettings settings;
    settings.frames = 20;
    settings.warmup_frames = 10;
    settings.threads_before_backend = real.threads_before;
    PipelineStages stages = real.Stages();
    std::atomic<bool> stop{false};
    auto result = RunPipeline(settings, stages, stop);
    ASSERT_FALSE(result.has_value()) << "nothing recorded is no success";
    EXPECT_EQ(result.error().code, ExitCode::kUsage);
    const std::string& m = result.error().message;
    EXPECT_NE(m.find(fmt::format("ended after {} frame(s)", frames)), std::string::npos) << m;
    EXPECT_NE(m.find("--warmup 10"), std::string::npos) << m;
    EXPECT_NE(m.find("11 frames"), std::string::npos) << m;
    EXPECT_NE(m.find(",loop"), std::string::npos) << m;
  }
  // One frame more than the warm-up: recorded, and the end of the source said.
  RealStages real;
  real.Load(1);
  real.source.frames = 11;
  PipelineSettings settings;
  settings.frames = 20;
  settings.warmup_frames = 10;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->frames.size(), 1u);
  EXPECT_TRUE(result->source_ended);
}

TEST(PipelineTest, WorkersSeenAreTheBackendThreadsInProc) {
  RealStages real;
  real.Load(2);
  PipelineSettings settings;
  settings.frames = 5;
  settings.warmup_frames = 3;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  // Independently: the threads in /proc/self/task now that were not there before the first
  // backend: OpenCV's pool, which outlives the run. The pipeline's two threads have been
  // joined, but a joined thread can still be listed for a moment while the kernel finishes
  // its exit (pthread_join returns when its tid is cleared, before the task is released), so
  // they are told apart by the names the pipeline gives them.
  std::vector<int> before = real.threads_before;
  std::sort(before.begin(), before.end());
  int new_threads = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    const int tid = std::stoi(entry.path().filename().string());
    if (std::binary_search(before.begin(), before.end(), tid)) continue;
    std::ifstream comm_file(entry.path() / "comm");
    std::string comm;
    if (!std::getline(comm_file, comm)) continue;  // Gone since the listing.
    if (comm == "rtp-capture" || comm == "rtp-inference") continue;
    ++new_threads;
  }
  EXPECT_EQ(result->workers_seen, new_threads);
  int worker_checks = 0;
  for (const ThreadCheck& t : result->threads) worker_checks += t.role == "worker" ? 1 : 0;
  EXPECT_EQ(result->workers_seen, worker_checks);
  // Not given the threads before the backend: not known, and not claimed.
  settings.threads_before_backend.reset();
  auto unknown = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(unknown.has_value()) << unknown.error().message;
  EXPECT_EQ(unknown->workers_seen, -1);
}

TEST(PipelineTest, ADriverTimestampFromThePastIsTheCaptureTime) {
  RealStages real;
  real.Load(1);
  real.source.stamp_back_ns = 7 * kNsPerMs;
  PipelineSettings settings;
  settings.frames = 10;
  settings.warmup_frames = 1;
  settings.deadline_ns = 5 * kNsPerMs;  // Below the 7 ms the stamp lies in the past.
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->frames.size(), 10u);
  for (const FrameRecord& r : result->frames) {
    EXPECT_EQ(r.capture_ns, real.source.stamps[r.source_seq]);
    EXPECT_GE(r.read_end_ns - r.capture_ns, 7 * kNsPerMs);
    EXPECT_TRUE(r.miss) << "alert - capture >= 7 ms > the 5 ms deadline";
  }
  EXPECT_EQ(result->misses, 10u);
}

TEST(PipelineTest, PeriodicFasterThanTheWorkDropsExactlyReleasedMinusProcessed) {
  RealStages real;
  real.Load(1);
  SlowBackend slow(*real.backend, 12 * kNsPerMs);  // Work >= 12 ms per frame.
  PipelineSettings settings;
  settings.mode = PipelineMode::kPeriodic;
  settings.fps = 200;  // A release every 5 ms.
  settings.frames = 20;
  settings.warmup_frames = 2;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages(&slow);
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->frames.size(), 20u);
  ExpectMonotonic(*result);
  const int64_t period_ns = 5 * kNsPerMs;
  uint64_t dropped = 0;
  uint64_t misses = 0;
  for (size_t i = 0; i < result->frames.size(); ++i) {
    const FrameRecord& r = result->frames[i];
    dropped += r.dropped_before;
    // The default deadline is one period; the work alone takes longer.
    misses += r.alert_ns - r.capture_ns > period_ns ? 1 : 0;
    EXPECT_TRUE(r.miss);
    if (i == 0) continue;
    // Releases sit on an absolute grid: the gap to the previous processed frame is exactly
    // the frames dropped in between plus one period.
    const FrameRecord& p = result->frames[i - 1];
    EXPECT_EQ(r.release_ns - p.release_ns, static_cast<int64_t>(r.dropped_before + 1) * period_ns);
  }
  // 12 ms of work spans more than two releases: frames are dropped (each gap is not asserted:
  // a capture thread kept off the CPU by the VM hands over a late frame with no drop before).
  EXPECT_GE(result->dropped, 1u);
  EXPECT_EQ(result->dropped, dropped);
  EXPECT_EQ(result->released - result->frames.size(), result->dropped);
  EXPECT_EQ(result->misses, misses);
  EXPECT_EQ(result->misses, 20u);
  EXPECT_EQ(result->period_ns, period_ns);
  EXPECT_EQ(result->deadline_ns, period_ns);  // The default: one period.
}

TEST(PipelineTest, PeriodicMissesCountAgainstTheDeadlineGiven) {
  RealStages real;
  real.Load(1);
  SlowBackend slow(*real.backend, 4 * kNsPerMs);
  PipelineSettings settings;
  settings.mode = PipelineMode::kPeriodic;
  settings.fps = 25;                    // 40 ms period: the work keeps up.
  settings.deadline_ns = 2 * kNsPerMs;  // Below the 4 ms of work: every frame misses.
  settings.frames = 12;
  settings.warmup_frames = 1;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages(&slow);
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->frames.size(), 12u);
  EXPECT_EQ(result->misses, 12u);
  for (size_t i = 1; i < result->frames.size(); ++i) {
    const auto gap = result->frames[i].release_ns - result->frames[i - 1].release_ns;
    EXPECT_EQ(gap, static_cast<int64_t>(result->frames[i].dropped_before + 1) * 40 * kNsPerMs);
  }
  EXPECT_EQ(result->released - result->frames.size(), result->dropped);

  // The same run with a deadline far above any VM stall: no miss.
  RealStages again;
  again.Load(1);
  settings.deadline_ns = 2 * kNsPerSec;
  settings.threads_before_backend = again.threads_before;
  PipelineStages stages2 = again.Stages();
  auto relaxed = RunPipeline(settings, stages2, stop);
  ASSERT_TRUE(relaxed.has_value()) << relaxed.error().message;
  EXPECT_EQ(relaxed->misses, 0u);
}

TEST(PipelineTest, SelfPacedSourceInPeriodicModeDropsWhatTheWorkCannotTake) {
  RealStages real;
  real.Load(1);
  real.source.self_paced = true;
  real.source.sleep_ns = 3 * kNsPerMs;  // A "camera" at about 300 fps.
  SlowBackend slow(*real.backend, 10 * kNsPerMs);
  PipelineSettings settings;
  settings.mode = PipelineMode::kPeriodic;
  settings.fps = 0;  // The source's own pace.
  settings.frames = 15;
  settings.warmup_frames = 1;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages(&slow);
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->frames.size(), 15u);
  ExpectMonotonic(*result);
  uint64_t dropped = 0;
  for (size_t i = 1; i < result->frames.size(); ++i) {
    const FrameRecord& r = result->frames[i];
    // Every read is a release: the source's sequence shows the frames never taken.
    EXPECT_EQ(r.dropped_before, r.source_seq - result->frames[i - 1].source_seq - 1);
    dropped += r.dropped_before;
  }
  EXPECT_GE(dropped, 1u);  // 10 ms of work against a frame every 3 ms.
  EXPECT_EQ(result->dropped, dropped);
  EXPECT_EQ(result->released, result->frames.size() + dropped);
}

TEST(PipelineTest, StopEndsARunBlockedInSlowReadsPromptlyAndKeepsTheFrames) {
  RealStages real;
  real.Load(1);
  real.source.sleep_ns = 150 * kNsPerMs;
  PipelineSettings settings;
  settings.frames = 1000;  // 150 s if not stopped.
  settings.warmup_frames = 1;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    pipetest::SleepNs(700 * kNsPerMs);
    stop.store(true);
  });
  const int64_t t0 = MonotonicNs();
  auto result = RunPipeline(settings, stages, stop);
  const int64_t elapsed = MonotonicNs() - t0;
  stopper.join();
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_TRUE(result->interrupted);
  EXPECT_TRUE(result->error.empty()) << result->error;
  EXPECT_GE(result->frames.size(), 1u);
  EXPECT_LT(result->frames.size(), 1000u);
  // Bounded: the stop waits for at most the read under way (150 ms), not for the run.
  EXPECT_LT(elapsed, 10 * kNsPerSec);
  for (const FrameRecord& r : result->frames) EXPECT_GT(r.alert_ns, 0);
  ExpectMonotonic(*result);
}

TEST(PipelineTest, AFailingSourceEndsTheRunWithTheFramesSoFar) {
  RealStages real;
  real.Load(1);
  real.source.fail_at = 10;  // Reads 0..9 work: 2 warm-up frames, then 8 recorded.
  PipelineSettings settings;
  settings.frames = 50;
  settings.warmup_frames = 2;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->frames.size(), 8u);
  EXPECT_NE(result->error.find("test source: read failed: test source: injected I/O error"),
            std::string::npos)
      << result->error;
  EXPECT_FALSE(result->interrupted);
  ExpectMonotonic(*result);
}

TEST(PipelineTest, AFailingStageEndsTheRunAndNamesTheStage) {
  RealStages real;
  real.Load(1);
  real.source.resize_at = 7;  // The preprocessor refuses a frame of another size.
  PipelineSettings settings;
  settings.frames = 50;
  settings.warmup_frames = 2;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->frames.size(), 5u);
  EXPECT_NE(result->error.find("preprocess failed at source frame 7"), std::string::npos)
      << result->error;

  RealStages other;
  other.Load(1);
  SlowBackend failing(*other.backend, 0);
  failing.FailAt(6);  // Runs 0..1 warm-up, 2..5 recorded.
  PipelineStages stages2 = other.Stages(&failing);
  settings.threads_before_backend = other.threads_before;
  auto failed = RunPipeline(settings, stages2, stop);
  ASSERT_TRUE(failed.has_value()) << failed.error().message;
  EXPECT_EQ(failed->frames.size(), 4u);
  EXPECT_NE(failed->error.find("inference (opencv-dnn"), std::string::npos) << failed->error;
  EXPECT_NE(failed->error.find("injected inference failure"), std::string::npos);
}

TEST(PipelineTest, TheSourcesReferencesReachThePostprocessorWithEachFrame) {
  RealStages real;
  real.Load(1);
  real.source.one_reference_at = 6;  // Frames 0..5 keep the prepared references.
  PipelineSettings settings;
  settings.frames = 50;
  settings.warmup_frames = 2;
  settings.threads_before_backend = real.threads_before;
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->frames.size(), 4u);
  EXPECT_NE(result->error.find("postprocess failed at source frame 6: the source's references"),
            std::string::npos)
      << result->error;
  // Not refreshed: the prepared references stay, and the run goes on.
  RealStages again;
  again.Load(1);
  again.source.one_reference_at = 6;
  settings.per_frame_references = false;
  settings.frames = 10;
  settings.threads_before_backend = again.threads_before;
  PipelineStages stages2 = again.Stages();
  auto kept = RunPipeline(settings, stages2, stop);
  ASSERT_TRUE(kept.has_value()) << kept.error().message;
  EXPECT_TRUE(kept->error.empty()) << kept->error;
  EXPECT_EQ(kept->frames.size(), 10u);
}

TEST(PipelineTest, TheSyntheticSourceRunsThroughTheRealStages) {
  RealStages real;
  real.Load(1);
  auto spec = ParseSourceSpec("synthetic:320x120");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  auto source = MakeSource(*spec);
  ASSERT_TRUE(source.has_value()) << source.error().message;
  ASSERT_TRUE((*source)->Open());
  CapturedFrame probe;
  ASSERT_TRUE((*source)->Read(probe).has_value());
  Preprocessor pre;
  Postprocessor post;
  ASSERT_TRUE(pre.Prepare(PreprocessSpec{}, 320, 120, real.backend->shape()));
  Status prepared =
      post.Prepare(DecisionSpec{}, real.backend->shape(), pre, (*source)->References());
  ASSERT_TRUE(prepared) << prepared.error().message;
  PipelineStages stages{source->get(), &pre, real.backend.get(), &post, nullptr, nullptr};
  PipelineSettings settings;
  settings.frames = 30;
  settings.warmup_frames = 2;
  settings.threads_before_backend = real.threads_before;
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_TRUE(result->error.empty()) << result->error;
  ASSERT_EQ(result->frames.size(), 30u);
  ExpectMonotonic(*result);
  for (size_t i = 0; i < result->frames.size(); ++i) {
    EXPECT_EQ(result->frames[i].source_seq, 3 + i);  // Frame 0 was the probe, 1..2 warm-up.
    EXPECT_TRUE(std::isfinite(result->frames[i].roi_depth_m));
  }
}

/// Logs every Set: the decision, the frame and the time it was given.
class TestAlert final : public AlertSink {
 public:
  struct Call {
    bool obstacle;
    uint64_t frame;
    int64_t now_ns;
  };
  std::vector<Call> calls;
  TestAlert() { calls.reserve(1000); }
  Status Set(bool obstacle, uint64_t frame, int64_t now_ns) override {
    calls.push_back({obstacle, frame, now_ns});
    return Status::Ok();
  }
  std::string Describe() const override { return "test alert"; }
};

/// Answers each wait with an injected edge timestamp, or with none (a timeout).
class TestLoopback final : public Loopback {
 public:
  bool answer = true;
  int64_t edge_ns = 0;
  int waits = 0;
  bool last_rising = false;
  Expected<std::optional<int64_t>> WaitEdge(bool rising, int64_t /*timeout_ns*/) override {
    ++waits;
    last_rising = rising;
    edge_ns = MonotonicNs() + 1234;  // Known, and after the alert.
    if (!answer) return std::optional<int64_t>{};
    return std::optional<int64_t>{edge_ns};
  }
  std::string Describe() const override { return "test loopback"; }
};

TEST(PipelineTest, TheAlertGetsEveryDecisionAndTheLoopbackEdgeIsRecorded) {
  for (const bool answer : {true, false}) {
    SCOPED_TRACE(answer ? "edge" : "timeout");
    RealStages real;
    real.Load(1);
    // Thresholds no depth reaches: the first frame turns "obstacle" (the state starts clear)
    // and it stays so: exactly one change, at the first recorded frame (no warm-up).
    DecisionSpec decide;
    decide.near_m = 1e9;
    decide.clear_m = 1e9;
    const std::vector<ReferencePoint> refs = {{10, 40, 3.0}, {80, 60, 1.0}, {48, 50, 2.0}};
    ASSERT_TRUE(real.post.Prepare(decide, real.backend->shape(), real.pre, refs));
    TestAlert alert;
    TestLoopback loopback;
    loopback.answer = answer;
    PipelineStages stages = real.Stages();
    stages.alert = &alert;
    stages.loopback = &loopback;
    PipelineSettings settings;
    settings.frames = 12;
    settings.warmup_frames = 0;
    settings.threads_before_backend = real.threads_before;
    std::atomic<bool> stop{false};
    auto result = RunPipeline(settings, stages, stop);
    ASSERT_TRUE(result.has_value()) << result.error().message;
    ASSERT_EQ(result->frames.size(), 12u);
    ASSERT_EQ(alert.calls.size(), 12u);
    for (size_t i = 0; i < 12; ++i) {
      const FrameRecord& r = result->frames[i];
      EXPECT_EQ(alert.calls[i].frame, r.source_seq);
      EXPECT_EQ(alert.calls[i].obstacle, r.obstacle);
      EXPECT_EQ(alert.calls[i].now_ns, r.post_end_ns);
      EXPECT_TRUE(r.obstacle);
      EXPECT_EQ(r.changed, i == 0);
      EXPECT_EQ(r.edge_ns, i == 0 && answer ? loopback.edge_ns : -1);
    }
    EXPECT_EQ(loopback.waits, 1);  // Only after the change.
    EXPECT_TRUE(loopback.last_rising);
    EXPECT_EQ(result->loopback_timeouts, answer ? 0u : 1u);
    EXPECT_EQ(result->end_ns, result->frames.back().alert_ns);
  }
}

TEST(PipelineTest, BadSettingsAreUsageErrorsNamingTheOption) {
  RealStages real;
  real.Load(1);
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  PipelineSettings settings;
  settings.mode = PipelineMode::kPeriodic;
  auto no_fps = RunPipeline(settings, stages, stop);
  ASSERT_FALSE(no_fps.has_value());
  EXPECT_EQ(no_fps.error().code, ExitCode::kUsage);
  EXPECT_NE(no_fps.error().message.find("--fps"), std::string::npos);
  settings = PipelineSettings{};
  settings.inference.policy = "fifo";
  settings.inference.priority = 0;
  auto bad_priority = RunPipeline(settings, stages, stop);
  ASSERT_FALSE(bad_priority.has_value());
  EXPECT_EQ(bad_priority.error().code, ExitCode::kUsage);
  EXPECT_NE(bad_priority.error().message.find("--inference-policy fifo:0"), std::string::npos)
      << bad_priority.error().message;
  settings = PipelineSettings{};
  settings.capture.policy = "sporadic";
  auto bad_policy = RunPipeline(settings, stages, stop);
  ASSERT_FALSE(bad_policy.has_value());
  EXPECT_NE(bad_policy.error().message.find("--capture-policy"), std::string::npos);
  settings = PipelineSettings{};
  settings.frames = 0;
  EXPECT_FALSE(RunPipeline(settings, stages, stop).has_value());
}

TEST(WorkerThreadsTest, ParsesStatWithACommOfSpacesAndParentheses) {
  // Fields 3..52 of a real stat line; comm "a (b) c"; rt_priority 70, policy 1 (fifo).
  std::string stat = "1234 (a (b) c) S";
  for (int field = 4; field <= 52; ++field) {
    stat += " " + std::to_string(field == 40 ? 70 : field == 41 ? 1 : field);
  }
  auto parsed =
      ParseTaskSched(stat + "\n", "Name:\tx\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  EXPECT_EQ(parsed->name, "a (b) c");
  EXPECT_EQ(parsed->policy, "fifo");
  EXPECT_EQ(parsed->priority, 70);
  EXPECT_EQ(parsed->cpus, "0-1");
  EXPECT_FALSE(ParseTaskSched("1234 (x) S 1 2", "Cpus_allowed_list:\t0\n").has_value());
  EXPECT_FALSE(ParseTaskSched(stat, "Name:\tx\n").has_value());

  ThreadCheck ok = CheckTask(5, "worker", {"fifo", 70, {0, 1}}, *parsed);
  EXPECT_TRUE(ok.as_asked) << ok.note;
  ThreadCheck differs = CheckTask(5, "worker", {"fifo", 60, {1}}, *parsed);
  EXPECT_FALSE(differs.as_asked);
  EXPECT_EQ(differs.note, "priority 70, asked 60; CPUs 0-1, asked 1");
  ThreadCheck other = CheckTask(5, "capture", {"other", 0, {}}, *parsed);
  EXPECT_EQ(other.note, "policy fifo, asked other");
}

TEST(WorkerThreadsTest, ListsThisProcessThreadsIncludingANewOne) {
  const std::vector<int> before = ListProcessThreads();
  EXPECT_NE(std::find(before.begin(), before.end(), static_cast<int>(getpid())), before.end());
  std::atomic<int> tid{0};
  std::atomic<bool> done{false};
  std::thread t([&] {
    tid = static_cast<int>(syscall(SYS_gettid));
    while (!done) pipetest::SleepNs(kNsPerMs);
  });
  while (tid == 0) pipetest::SleepNs(kNsPerMs);
  const std::vector<int> during = ListProcessThreads();
  done = true;
  t.join();
  EXPECT_NE(std::find(during.begin(), during.end(), tid.load()), during.end());
  EXPECT_EQ(std::find(before.begin(), before.end(), tid.load()), before.end());
}

}  // namespace
}  // namespace rtpulse::e2e
