#include "e2e/pipeline.h"

#include <fmt/format.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <thread>

#include "core/clock.h"
#include "core/fs_root.h"
#include "core/parse.h"
#include "e2e/worker_threads.h"
#include "measure/rt_setup.h"

namespace rtpulse::e2e {
namespace {

// The two threads wait on 32-bit counters with futex(2) and a bounded timeout, so neither
// holds a lock in the loop and both see `stop` within kPipeWaitSliceNs.
constexpr int64_t kPipeWaitSliceNs = 20 * kNsPerMs;
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
              std::atomic<uint32_t>::is_always_lock_free);

void PipeFutexWait(std::atomic<uint32_t>& word, uint32_t seen, int64_t timeout_ns) {
  const timespec timeout = ToTimespec(timeout_ns);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, &timeout,
          nullptr, 0);
}

void PipeFutexWake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

int PipeThreadId() {
  return static_cast<int>(syscall(SYS_gettid));
}

/// A frame slot of the hand-off: the captured frame and when it was released.
struct PipeSlot {
  CapturedFrame frame;
  uint64_t release_no = 0;  ///< Grid slot (periodic) or ask number (back-to-back).
  int64_t release_ns = 0;
  int64_t read_start_ns = 0;  ///< The pipeline's own clock around Read.
  int64_t read_end_ns = 0;
  std::vector<ReferencePoint> references;  ///< The source's, for this frame (may be empty).
};

// Three slots, a triple buffer: the capture thread writes its slot, then swaps it into
// `pending_` with the fresh bit; the inference thread swaps its slot out of `pending_` when
// the fresh bit is set. A fresh slot swapped out by the capture thread is a dropped frame,
// which the release numbers of the frames taken show exactly.
constexpr uint32_t kPipeSlots = 3;
constexpr uint32_t kPipeFresh = 4;
constexpr uint32_t kPipeIndexMask = 3;

class PipelineRun {
 public:
  PipelineRun(const PipelineSettings& settings, PipelineStages& stages, std::atomic<bool>& stop)
      : settings_(settings),
        stages_(stages),
        stop_(stop),
        periodic_(settings.mode == PipelineMode::kPeriodic),
        self_paced_(stages.source->SelfPaced()),
        read_stamped_(stages.source->timestamp_source() == TimestampSource::kRead) {
    if (periodic_ && settings.fps > 0) {
      period_ns_ = static_cast<int64_t>(1e9 / settings.fps + 0.5);
    }
    deadline_ns_ = settings.deadline_ns > 0 ? settings.deadline_ns : period_ns_;
  }

  Expected<PipelineResult> Run(const std::function<void(uint64_t)>& on_frame);

 private:
  bool Ending() const {
    return end_.load(std::memory_order_acquire) || stop_.load(std::memory_order_relaxed);
  }
  void EndRun() {
    end_.store(true, std::memory_order_release);
    published_.fetch_add(1, std::memory_order_release);
    PipeFutexWake(published_);
    asked_.fetch_add(1, std::memory_order_release);
    PipeFutexWake(asked_);
  }
  void Fail(std::string message) {
    {
      std::lock_guard lock(mutex_);
      if (error_.empty()) error_ = std::move(message);
    }
    EndRun();
  }

  // Start-up and the check after warm-up (not the loop: a mutex is fine here).
  void ReportStarted(int tid, Status status, bool capture);
  bool WaitForGo();

  void CaptureMain();
  bool CaptureRelease(uint64_t& release_no, int64_t& release_ns, int64_t start_ns,
                      int64_t period_ns);
  void InferenceMain();
  bool TakeFrame();
  bool ProcessFrame(FrameRecord& rec, bool recording);

  Status CheckPipelineThreads(PipelineResult& result, const std::vector<int>& baseline,
                              int caller_tid);

  const PipelineSettings& settings_;
  PipelineStages& stages_;
  std::atomic<bool>& stop_;
  bool periodic_ = false;
  bool self_paced_ = false;
  bool read_stamped_ = false;  ///< No driver timestamp: the frame exists at its release.
  int64_t period_ns_ = 0;      ///< Periodic with --fps; 0 otherwise.
  int64_t deadline_ns_ = 0;

  PipeSlot slots_[kPipeSlots];
  uint32_t capture_slot_ = 0;           // Owned by the capture thread.
  uint32_t infer_slot_ = 1;             // Owned by the inference thread.
  std::atomic<uint32_t> pending_{2};    // Slot index | kPipeFresh.
  std::atomic<uint32_t> published_{0};  // Futex word: publications (and wake-ups).
  std::atomic<uint32_t> asked_{0};      // Futex word, back-to-back: the inference asks.
  std::atomic<int64_t> ask_ns_{0};
  std::atomic<bool> end_{false};
  std::atomic<bool> source_ended_{false};
  std::atomic<bool> recording_{false};
  std::atomic<uint64_t> recorded_{0};
  uint64_t source_reads_ = 0;  // Owned by the capture thread; read after join.

  Tensor input_;
  Tensor output_;
  Decision decision_;
  std::vector<FrameRecord> records_;
  uint64_t last_release_no_ = 0;
  uint64_t dropped_ = 0;
  uint64_t lost_ = 0;
  uint64_t misses_ = 0;
  uint64_t loopback_timeouts_ = 0;

  std::mutex mutex_;
  std::condition_variable cv_;
  int started_ = 0;
  int capture_tid_ = 0;
  int inference_tid_ = 0;
  std::string error_;
  Status start_error_ = Status::Ok();
  bool warm_ = false;  // The inference thread finished its warm-up and waits for go_.
  bool go_ = false;
  bool inference_done_ = false;
};

void PipelineRun::ReportStarted(int tid, Status status, bool capture) {
  std::lock_guard lock(mutex_);
  (capture ? capture_tid_ : inference_tid_) = tid;
  if (!status && start_error_) start_error_ = std::move(status);
  ++started_;
  cv_.notify_all();
}

bool PipelineRun::WaitForGo() {
  std::unique_lock lock(mutex_);
  warm_ = true;
  cv_.notify_all();
  cv_.wait(lock, [&] { return go_ || end_.load(); });
  return go_ && !end_.load();
}

bool PipelineRun::CaptureRelease(uint64_t& release_no, int64_t& release_ns, int64_t start_ns,
                                 int64_t period_ns) {
  if (!periodic_) {
    // Back-to-back: wait until the inference thread asks; the ask is the release.
    while (true) {
      const uint32_t asks = asked_.load(std::memory_order_acquire);
      if (Ending()) return false;
      if (asks != static_cast<uint32_t>(release_no)) break;
      PipeFutexWait(asked_, asks, kPipeWaitSliceNs);
    }
    release_ns = ask_ns_.load(std::memory_order_acquire);
    return true;
  }
  if (self_paced_) {
    release_ns = MonotonicNs();  // The source's own pace: its read is the release.
    return !Ending();
  }
  // Periodic: the next slot of the absolute grid; slots already past (a read longer than a
  // period) are skipped, and their frames count as dropped through the release numbers.
  int64_t now = MonotonicNs();
  if (now > start_ns + static_cast<int64_t>(release_no + 1) * period_ns) {
    release_no = static_cast<uint64_t>((now - start_ns) / period_ns);
  }
  release_ns = start_ns + static_cast<int64_t>(release_no) * period_ns;
  while (now < release_ns) {
    if (Ending()) return false;
    const timespec until = ToTimespec(std::min(release_ns, now + kPipeWaitSliceNs));
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr);
    now = MonotonicNs();
  }
  return !Ending();
}

void PipelineRun::CaptureMain() {
  pthread_setname_np(pthread_self(), "rtp-capture");
  ReportStarted(PipeThreadId(),
                ApplySpecToThisThread(settings_.capture, "--capture-policy", "--capture-cpus"),
                true);
  {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return started_ == 2; });
    if (!start_error_) return;
  }
  measure::PrefaultStack(64 * 1024);
  bool counting = false;
  uint64_t release_no = 0;
  const int64_t start_ns = MonotonicNs() + period_ns_;
  while (true) {
    if (!counting && recording_.load(std::memory_order_acquire)) {
      if (settings_.before_loop) settings_.before_loop();
      counting = true;
    }
    int64_t release_ns = 0;
    if (!CaptureRelease(release_no, release_ns, start_ns, period_ns_)) break;
    PipeSlot& slot = slots_[capture_slot_];
    slot.read_start_ns = MonotonicNs();
    auto read = stages_.source->Read(slot.frame);
    slot.read_end_ns = MonotonicNs();
    if (!read) {
      Fail(fmt::format("source {}: read failed: {}", stages_.source->Describe(),
                       read.error().message));
      break;
    }
    if (!*read) {
      source_ended_.store(true, std::memory_order_release);
      EndRun();
      break;
    }
    if (settings_.per_frame_references) stages_.source->FillReferences(slot.references);
    ++source_reads_;
    slot.release_no = release_no++;
    slot.release_ns = periodic_ && self_paced_ ? slot.read_start_ns : release_ns;
    // The slots still empty (only at the first frame: the inference thread has none of them
    // yet) get the frame's size, so no later read reallocates.
    for (PipeSlot& other : slots_) {
      if (other.frame.image.empty()) {
        other.frame.image.Reshape(slot.frame.image.width, slot.frame.image.height);
      }
      if (other.references.capacity() < slot.references.capacity()) {
        other.references.reserve(slot.references.capacity());
      }
    }
    const uint32_t previous =
        pending_.exchange(capture_slot_ | kPipeFresh, std::memory_order_acq_rel);
    capture_slot_ = previous & kPipeIndexMask;
    published_.fetch_add(1, std::memory_order_release);
    PipeFutexWake(published_);
  }
  if (counting && settings_.after_loop) settings_.after_loop();
}

bool PipelineRun::TakeFrame() {
  if (!periodic_) {
    ask_ns_.store(MonotonicNs(), std::memory_order_release);
    asked_.fetch_add(1, std::memory_order_release);
    PipeFutexWake(asked_);
  }
  while (true) {
    const uint32_t seen = published_.load(std::memory_order_acquire);
    if ((pending_.load(std::memory_order_acquire) & kPipeFresh) != 0) break;
    if (Ending()) return false;
    PipeFutexWait(published_, seen, kPipeWaitSliceNs);
  }
  if (stop_.load(std::memory_order_relaxed)) return false;
  const uint32_t taken = pending_.exchange(infer_slot_, std::memory_order_acq_rel);
  infer_slot_ = taken & kPipeIndexMask;
  return true;
}

bool PipelineRun::ProcessFrame(FrameRecord& rec, bool recording) {
  const PipeSlot& slot = slots_[infer_slot_];
  rec.infer_start_ns = MonotonicNs();
  if (Status s = stages_.preprocess->Run(slot.frame.image, input_); !s) {
    Fail(
        fmt::format("preprocess failed at source frame {}: {}", slot.frame.seq, s.error().message));
    return false;
  }
  rec.pre_end_ns = MonotonicNs();
  if (Status s = stages_.inference->Run(input_, output_); !s) {
    Fail(fmt::format("inference ({}) failed at source frame {}: {}", stages_.inference->name(),
                     slot.frame.seq, s.error().message));
    return false;
  }
  rec.inference_end_ns = MonotonicNs();
  if (!slot.references.empty()) {
    if (Status s = stages_.postprocess->SetReferences(*stages_.preprocess, slot.references); !s) {
      Fail(fmt::format("postprocess failed at source frame {}: the source's references: {}",
                       slot.frame.seq, s.error().message));
      return false;
    }
  }
  if (Status s = stages_.postprocess->Run(output_, decision_); !s) {
    Fail(fmt::format("postprocess failed at source frame {}: {}", slot.frame.seq,
                     s.error().message));
    return false;
  }
  rec.post_end_ns = MonotonicNs();
  if (stages_.alert != nullptr) {
    if (Status s = stages_.alert->Set(decision_.obstacle, slot.frame.seq, rec.post_end_ns); !s) {
      Fail(fmt::format("alert {} failed at source frame {}: {}", stages_.alert->Describe(),
                       slot.frame.seq, s.error().message));
      return false;
    }
    rec.alert_ns = MonotonicNs();
  } else {
    rec.alert_ns = rec.post_end_ns;  // No alert: decision to alert is 0.
  }
  rec.edge_ns = -1;
  if (stages_.loopback != nullptr && decision_.changed) {
    auto edge = stages_.loopback->WaitEdge(decision_.obstacle, settings_.loopback_timeout_ns);
    if (!edge) {
      Fail(fmt::format("loopback {} failed at source frame {}: {}", stages_.loopback->Describe(),
                       slot.frame.seq, edge.error().message));
      return false;
    }
    if (edge->has_value()) {
      rec.edge_ns = **edge;
    } else if (recording) {
      ++loopback_timeouts_;
    }
  }
  rec.source_seq = slot.frame.seq;
  rec.release_ns = slot.release_ns;
  // A source without a driver timestamp: the frame exists at its release (the grid point, or
  // the ask), so Capture and Total include the capture thread's wake-up and hand-off. A
  // driver's stamp is kept as it is, even before the release (a frame queued in the driver).
  if (read_stamped_ || slot.frame.capture_ns == 0) {
    rec.capture_ns = slot.release_ns;
  } else {
    rec.capture_ns = slot.frame.capture_ns;
  }
  rec.read_end_ns = slot.read_end_ns;
  rec.lost_before = slot.frame.lost_before;
  rec.obstacle = decision_.obstacle;
  rec.changed = decision_.changed;
  rec.roi_depth_m = decision_.roi_depth_m;
  rec.miss = deadline_ns_ > 0 && rec.alert_ns - rec.capture_ns > deadline_ns_;
  return true;
}

void PipelineRun::InferenceMain() {
  pthread_setname_np(pthread_self(), "rtp-inference");
  ReportStarted(
      PipeThreadId(),
      ApplySpecToThisThread(settings_.inference, "--inference-policy", "--inference-cpus"), false);
  {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return started_ == 2; });
    if (!start_error_) return;
  }
  measure::PrefaultStack(64 * 1024);
  FrameRecord scratch;
  for (uint64_t i = 0; i < settings_.warmup_frames; ++i) {
    if (!TakeFrame() || !ProcessFrame(scratch, false)) break;
  }
  if (WaitForGo()) {
    if (periodic_ && (pending_.load(std::memory_order_acquire) & kPipeFresh) != 0) {
      // A frame released while the threads were checked would start the record with that
      // pause in its queue wait: it is left unrecorded, like the warm-up.
      infer_slot_ = pending_.exchange(infer_slot_, std::memory_order_acq_rel) & kPipeIndexMask;
    }
    recording_.store(true, std::memory_order_release);
    if (settings_.before_loop) settings_.before_loop();
    bool first = true;
    for (uint64_t i = 0; i < records_.size(); ++i) {
      if (!TakeFrame()) break;
      FrameRecord& rec = records_[i];
      if (!ProcessFrame(rec, true)) break;
      const uint64_t release_no = slots_[infer_slot_].release_no;
      rec.index = i;
      rec.dropped_before = first ? 0 : static_cast<uint32_t>(release_no - last_release_no_ - 1);
      first = false;
      last_release_no_ = release_no;
      dropped_ += rec.dropped_before;
      lost_ += rec.lost_before;
      misses_ += rec.miss ? 1 : 0;
      recorded_.store(i + 1, std::memory_order_release);
    }
    if (settings_.after_loop) settings_.after_loop();
  }
  {
    std::lock_guard lock(mutex_);
    inference_done_ = true;
  }
  EndRun();
  cv_.notify_all();
}

Status PipelineRun::CheckPipelineThreads(PipelineResult& result, const std::vector<int>& baseline,
                                         int caller_tid) {
  std::vector<int> workers;
  for (int tid : ListProcessThreads()) {
    if (tid == capture_tid_ || tid == inference_tid_ || tid == caller_tid) continue;
    if (std::binary_search(baseline.begin(), baseline.end(), tid)) continue;
    auto applied = ApplySpecToTask(tid, settings_.inference, "--inference-policy");
    if (!applied) return applied.error();
    if (*applied) workers.push_back(tid);
  }
  const auto check = [&](int tid, std::string_view role, const ThreadSpec& spec) {
    auto seen = ReadTaskSched(tid);
    if (!seen) {
      result.notes.push_back(fmt::format("{} thread {}: {}", role, tid, seen.error().message));
      return;
    }
    result.threads.push_back(CheckTask(tid, role, spec, *seen));
  };
  check(capture_tid_, "capture", settings_.capture);
  check(inference_tid_, "inference", settings_.inference);
  for (int tid : workers) check(tid, "worker", settings_.inference);
  if (settings_.threads_before_backend) result.workers_seen = static_cast<int>(workers.size());
  const size_t inference_threads = workers.size() + 1;
  const std::vector<int>& cpus = settings_.inference.cpus;
  if (!cpus.empty() && inference_threads != cpus.size()) {
    result.notes.push_back(fmt::format(
        "{} inference threads on {} CPUs: the inference thread and {} worker thread(s) of the "
        "backend ({}) on --inference-cpus {}; {}",
        inference_threads, cpus.size(), workers.size(), stages_.inference->name(),
        FormatCpuList(cpus),
        inference_threads > cpus.size() ? "threads share CPUs and wait for each other"
                                        : "CPUs are left idle"));
  }
  return Status::Ok();
}

Expected<PipelineResult> PipelineRun::Run(const std::function<void(uint64_t)>& on_frame) {
  PipelineResult result;
  const int caller_tid = PipeThreadId();
  std::vector<int> baseline = settings_.threads_before_backend.value_or(ListProcessThreads());
  std::sort(baseline.begin(), baseline.end());
  if (!settings_.threads_before_backend) {
    result.notes.push_back(
        "the threads before the backend's load were not given: worker threads it created "
        "then are not identified, checked or given the inference scheduling");
  }
  records_.resize(settings_.frames);
  const ModelShape& shape = stages_.inference->shape();
  input_.shape = {1, shape.in_channels, shape.in_height, shape.in_width};
  input_.data.resize(input_.ElementCount());
  output_.shape = {1, shape.out_channels, shape.out_height, shape.out_width};
  output_.data.resize(output_.ElementCount());

  std::thread capture([this] { CaptureMain(); });
  std::thread inference([this] { InferenceMain(); });
  Status check = Status::Ok();
  {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return started_ == 2; });
    if (start_error_) {
      cv_.wait(lock, [&] { return warm_ || inference_done_; });
      if (warm_ && !end_.load()) {
        lock.unlock();
        check = CheckPipelineThreads(result, baseline, caller_tid);
        lock.lock();
        if (!check) {
          end_.store(true);
        } else {
          go_ = true;
        }
      }
      cv_.notify_all();
    }
  }
  if (!check) EndRun();
  if (start_error_ && check) {
    uint64_t reported = UINT64_MAX;
    while (true) {
      {
        std::unique_lock lock(mutex_);
        if (cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return inference_done_; })) {
          break;
        }
      }
      const uint64_t now = recorded_.load(std::memory_order_acquire);
      if (on_frame && now != reported) on_frame(now);
      reported = now;
    }
  }
  inference.join();
  capture.join();
  if (!start_error_) return start_error_.error();
  if (!check) return check.error();

  const uint64_t count = recorded_.load();
  if (count == 0 && source_ended_.load() && error_.empty() && !stop_.load()) {
    // A finite source used up before the first recorded frame: nothing to report, and no
    // success either (docs/e2e.md, "Sources").
    return UsageError(fmt::format(
        "source {} ended after {} frame(s), before the first recorded frame (--warmup {} "
        "runs first): a run needs at least --warmup + 1 = {} frames; lower --warmup or make "
        "the source loop "
        "(video and images: add ,loop)",
        stages_.source->Describe(), source_reads_, settings_.warmup_frames,
        settings_.warmup_frames + 1));
  }
  records_.resize(count);
  if (on_frame) on_frame(count);
  result.frames = std::move(records_);
  result.dropped = dropped_;
  result.lost = lost_;
  result.misses = misses_;
  result.loopback_timeouts = loopback_timeouts_;
  result.released = count == 0 ? 0 : count + dropped_;
  result.error = error_;
  result.period_ns = period_ns_;
  result.deadline_ns = deadline_ns_;
  if (deadline_ns_ == 0) {
    result.notes.push_back(
        periodic_ ? "no deadline: the source paces itself and neither --deadline nor --fps was "
                    "given, so misses are not counted"
                  : "no deadline: back-to-back without --deadline, so misses are not counted");
  }
  result.source_ended = source_ended_.load() && count < settings_.frames;
  result.interrupted = stop_.load() && count < settings_.frames && error_.empty();
  if (!result.frames.empty()) {
    result.start_ns = result.frames.front().release_ns;
    const FrameRecord& last = result.frames.back();
    result.end_ns = std::max(last.alert_ns, last.edge_ns);
  }
  return result;
}

}  // namespace

std::vector<int> ListProcessThreads() {
  std::vector<int> tids;
  for (const std::string& name : FsRoot::Live().List("/proc/self/task")) {
    auto tid = ParseInt(name, "tid");
    if (tid) tids.push_back(static_cast<int>(*tid));
  }
  std::sort(tids.begin(), tids.end());
  return tids;
}

double PipelineResult::ThroughputFps() const {
  if (frames.size() < 2) return 0;
  const int64_t span = frames.back().alert_ns - frames.front().alert_ns;
  if (span <= 0) return 0;
  return static_cast<double>(frames.size() - 1) * 1e9 / static_cast<double>(span);
}

Expected<PipelineResult> RunPipeline(const PipelineSettings& settings, PipelineStages& stages,
                                     std::atomic<bool>& stop,
                                     const std::function<void(uint64_t)>& on_frame) {
  if (stages.source == nullptr || stages.preprocess == nullptr || stages.inference == nullptr ||
      stages.postprocess == nullptr) {
    return Failure("pipeline: a source, a preprocessor, a backend and a postprocessor are needed");
  }
  if (settings.frames == 0) return UsageError("--frames 0: give at least 1 frame to record");
  if (Status s = CheckThreadSpec(settings.capture, "--capture-policy"); !s) return s.error();
  if (Status s = CheckThreadSpec(settings.inference, "--inference-policy"); !s) {
    return s.error();
  }
  const bool periodic = settings.mode == PipelineMode::kPeriodic;
  const bool self_paced = stages.source->SelfPaced();
  if (periodic && settings.fps <= 0 && !self_paced) {
    return UsageError(fmt::format(
        "periodic mode needs --fps F: source {} does not pace itself (give e.g. --fps 10)",
        stages.source->Describe()));
  }
  if (settings.fps < 0) return UsageError(fmt::format("--fps {}: must be > 0", settings.fps));
  if (settings.deadline_ns < 0) {
    return UsageError(fmt::format("--deadline {} ns: must be >= 0", settings.deadline_ns));
  }
  PipelineRun run(settings, stages, stop);
  return run.Run(on_frame);
}

}  // namespace rtpulse::e2e
