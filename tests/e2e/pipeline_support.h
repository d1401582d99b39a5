// What the pipeline tests share: a test FrameSource that sleeps a known time per read and
// stamps known capture times, a backend wrapper that adds known work to the real one, and the
// real stages on the generated depth-tiny model.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "e2e/inference.h"
#include "e2e/pipeline.h"
#include "e2e/processing.h"
#include "support/test_paths.h"

namespace rtpulse::e2e::pipetest {

inline void SleepNs(int64_t ns) {
  if (ns <= 0) return;
  const timespec ts = ToTimespec(ns);
  clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
}

/// Frames of `width` x `height` with a moving pattern. Each read sleeps `sleep_ns` (the
/// capture stage's ground truth); capture_ns is the read's start minus `stamp_back_ns` (a
/// driver timestamp from the past), logged per seq so the test knows every stamp.
class TestSource final : public FrameSource {
 public:
  int width = 96;
  int height = 64;
  int64_t sleep_ns = 0;
  int64_t stamp_back_ns = 0;
  int64_t frames = -1;     ///< Finite: Read returns false after this many.
  int64_t fail_at = -1;    ///< Read number that fails with an I/O error.
  int64_t resize_at = -1;  ///< Read number from which frames are 2 pixels wider.
  bool self_paced = false;
  int64_t one_reference_at = -1;  ///< From this read on, References() has 1 point (too few).
  std::vector<int64_t> stamps;    ///< capture_ns by seq (preallocated by Open).
  std::vector<int64_t> sleeps;    ///< The pipeline-independent measure of each read's sleep.

  Status Open() override {
    stamps.assign(100000, 0);
    sleeps.assign(100000, 0);
    return Status::Ok();
  }
  Expected<bool> Read(CapturedFrame& frame) override {
    const int64_t n = reads_++;
    if (n == fail_at) return Failure("test source: injected I/O error");
    if (frames >= 0 && n >= frames) return false;
    const int64_t start = MonotonicNs();
    SleepNs(sleep_ns);
    const int w = resize_at >= 0 && n >= resize_at ? width + 2 : width;
    frame.image.Reshape(w, height);
    for (size_t i = 0; i < frame.image.bgr.size(); ++i) {
      frame.image.bgr[i] = static_cast<uint8_t>((i + static_cast<size_t>(n) * 7) & 0xff);
    }
    frame.seq = static_cast<uint64_t>(n);
    frame.read_start_ns = start;
    frame.capture_ns = start - stamp_back_ns;
    frame.read_end_ns = MonotonicNs();
    if (static_cast<size_t>(n) < stamps.size()) {
      stamps[static_cast<size_t>(n)] = frame.capture_ns;
      sleeps[static_cast<size_t>(n)] = frame.read_end_ns - start;
    }
    return true;
  }
  TimestampSource timestamp_source() const override {
    return stamp_back_ns != 0 ? TimestampSource::kDriverEndOfFrame : TimestampSource::kRead;
  }
  std::string Describe() const override { return "test source"; }
  bool SelfPaced() const override { return self_paced; }
  std::vector<ReferencePoint> References() const override {
    if (one_reference_at < 0 || reads_ <= one_reference_at) return {};
    return {{10, 40, 3.0}};
  }

 private:
  int64_t reads_ = 0;
};

/// The real backend plus `extra_ns` of sleep per inference: work of a known least duration.
class SlowBackend final : public InferenceBackend {
 public:
  SlowBackend(InferenceBackend& real, int64_t extra_ns) : real_(real), extra_ns_(extra_ns) {}
  Status Load(const std::string& path, int threads) override { return real_.Load(path, threads); }
  Status Run(const Tensor& input, Tensor& output) override {
    if (fail_at_ >= 0 && runs_++ == fail_at_) return Failure("injected inference failure");
    Status s = real_.Run(input, output);
    SleepNs(extra_ns_);
    return s;
  }
  std::string name() const override { return real_.name(); }
  std::string why() const override { return real_.why(); }
  int threads() const override { return real_.threads(); }
  const ModelShape& shape() const override { return real_.shape(); }
  void FailAt(int64_t run) { fail_at_ = run; }

 private:
  InferenceBackend& real_;
  int64_t extra_ns_;
  int64_t fail_at_ = -1;
  int64_t runs_ = 0;
};

/// The real OpenCV backend on depth-tiny.onnx and the real pre/postprocessing around it.
struct RealStages {
  std::vector<int> threads_before;
  std::unique_ptr<InferenceBackend> backend;
  Preprocessor pre;
  Postprocessor post;
  TestSource source;

  /// Loads the test model (or `model`) into OpenCV's backend with `threads` threads.
  void Load(int threads,
            const std::string& model = std::string(RTPULSE_MODELS_DIR) + "/depth-tiny.onnx") {
    // Before the process's first backend: OpenCV's pool outlives a backend (as in --sweep).
    static const std::vector<int> before_any_backend = ListProcessThreads();
    threads_before = before_any_backend;
    auto made = MakeBackend(BackendKind::kOpenCv);
    ASSERT_TRUE(made.has_value()) << made.error().message;
    backend = std::move(*made);
    Status loaded = backend->Load(model, threads);
    ASSERT_TRUE(loaded) << loaded.error().message;
    ASSERT_TRUE(source.Open());
    Status p = pre.Prepare(PreprocessSpec{}, source.width, source.height, backend->shape());
    ASSERT_TRUE(p) << p.error().message;
    const std::vector<ReferencePoint> refs = {{10, 40, 3.0}, {80, 60, 1.0}, {48, 50, 2.0}};
    Status q = post.Prepare(DecisionSpec{}, backend->shape(), pre, refs);
    ASSERT_TRUE(q) << q.error().message;
  }
  PipelineStages Stages(InferenceBackend* inference = nullptr) {
    PipelineStages stages;
    stages.source = &source;
    stages.preprocess = &pre;
    stages.inference = inference != nullptr ? inference : backend.get();
    stages.postprocess = &post;
    return stages;
  }
};

}  // namespace rtpulse::e2e::pipetest
