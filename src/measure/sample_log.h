#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/samples_file.h"

namespace rtpulse::measure {

// The file format (SampleRecord, the header, the reader) lives in core/samples_file.h;
// measure's names for it stay valid.
using rtpulse::LatencyNs;
using rtpulse::ReadSamplesFile;
using rtpulse::SampleRecord;
using rtpulse::SamplesBlock;
using rtpulse::SamplesFileInfo;
using rtpulse::SamplesFileSummary;
using rtpulse::SamplesFormat;

/// Single-producer single-consumer ring: the probe thread pushes, the writer thread drains.
/// Preallocated and prefaulted in the constructor (call mlockall afterwards to keep it
/// resident); a push never allocates, locks or blocks. Exactly one thread may call Push and
/// exactly one (possibly another) thread may call Drain; the counters may be read anywhere.
class SampleRing {
 public:
  /// Larger rings are a caller bug (2^28 records = 8 GiB): the constructor aborts.
  static constexpr size_t kMaxCapacity = size_t{1} << 28;

  /// `capacity` is rounded up to a power of two (at least 1).
  explicit SampleRing(size_t capacity);
  SampleRing(const SampleRing&) = delete;
  SampleRing& operator=(const SampleRing&) = delete;

  /// Producer side. Returns false (and counts a drop) when the ring is full.
  bool Push(const SampleRecord& record);
  /// Consumer side: moves up to `max` records into `out` in push order, returns how many.
  size_t Drain(SampleRecord* out, size_t max);
  /// Records Push refused because the ring was full.
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  /// Every record offered to Push, dropped ones included. Once the producer has stopped and
  /// the ring is drained: pushed() == drained + dropped().
  uint64_t pushed() const { return pushed_.load(std::memory_order_relaxed); }
  size_t capacity() const { return mask_ + 1; }

 private:
  std::vector<SampleRecord> slots_;
  size_t mask_;
  // Written by the producer only (one cache line, so the consumer's stores never evict it).
  alignas(64) std::atomic<uint64_t> head_{0};  // next slot the producer writes
  uint64_t cached_tail_ = 0;  // producer's last view of tail_; reloaded only when it looks full
  std::atomic<uint64_t> pushed_{0};
  std::atomic<uint64_t> dropped_{0};
  // Written by the consumer only.
  alignas(64) std::atomic<uint64_t> tail_{0};  // next slot the consumer reads
};

/// The threads one wake path's probes run in, told to the run's sink before that path
/// measures (--explain filters the trace's syscall events to them).
struct ProbeThreadIds {
  size_t path_index = 0;
  std::string wake;  ///< The path's name (WakePathName).
  /// CLOCK_MONOTONIC, taken before the path's grid origin and after the previous path's last
  /// sample: a sample with expected_ns >= from_ns belongs to this path's threads.
  int64_t from_ns = 0;
  /// gettid() of probe thread i (SampleRecord::thread == i); 0 = that thread never started.
  std::vector<int> probe_tids;
  /// Threads the wake path runs for its probes, which take part in the wake chain: the
  /// xthread waker, the gpio edge driver. Known only once the probes armed their sources.
  std::vector<int> helper_tids;
};

/// Where drained records go: the binary samples file, or cyclictest -v text lines.
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  /// Before each wake path measures (from the engine's non-RT main thread, possibly while
  /// the writer thread is in Write()): its probe threads, then, when the path has helper
  /// threads, once more with them once the probes have armed. Never from a probe.
  virtual void OnProbeThreads(const ProbeThreadIds& /*threads*/) {}
  /// `count` may be 0: the writer's idle tick, so a buffering sink can flush on time.
  virtual Status Write(const SampleRecord* records, size_t count) = 0;
  /// `count` samples of a source without deadlines or threads (rtpulse import of one value
  /// per line): record i is {first_seq + i, expected 0, actual latency_ns[i], thread 0, cpu
  /// 0xFFFF}. The default builds the records and calls Write(); the file sink encodes them
  /// from the latencies alone, the same bytes.
  virtual Status WriteLatencies(const int64_t* latency_ns, size_t count, uint64_t first_seq);
  /// Called once after the last Write. `dropped` is the total the rings could not hold.
  virtual Status Finish(uint64_t dropped, bool interrupted) = 0;
};

/// Binary samples file sink. Streams into "<path>.tmp.<pid>" and renames onto `path` in
/// Finish(), so a completed or interrupted run leaves a whole file; a crash leaves the .tmp
/// (readable, without trailer). The header is written at once, records in large buffered
/// writes (at least one per second, so a crash loses about a second at most). Destroyed
/// without Finish(): the .tmp is kept (flushed) if it holds records, removed if it does not.
/// Version 2 (the default) is encoded in blocks by the calling (writer) thread; version 1
/// stays for readers that only know it.
Expected<std::unique_ptr<SampleSink>> OpenSamplesFile(const std::string& path,
                                                      const SamplesFileInfo& info,
                                                      SamplesFormat format = SamplesFormat::kV2);

/// `inner`'s work (encoding, writing) on a thread of its own, for a producer that is not a
/// real-time probe (rtpulse import): Write() copies the batch and returns at once unless
/// `depth` batches are already waiting. The first error of `inner` is returned by the next
/// Write() or by Finish(), which drains the queue and finishes `inner`. Records keep their
/// order.
std::unique_ptr<SampleSink> MakeBackgroundSink(std::unique_ptr<SampleSink> inner, size_t depth = 3);

/// cyclictest -v compatible text ("%8d:%8lu:%8ld" = thread:cycle:latency_us) to a FILE*,
/// which stays owned by the caller. cycle = seq; latency_us truncates toward zero. With
/// `reduction` N above 1 (cyclictest -o, its oscilloscope mode), one line per N samples of a
/// thread: the largest of them (never below 0, as cyclictest's) and its cycle.
std::unique_ptr<SampleSink> MakeVerboseSink(std::FILE* out, int64_t reduction = 1);

/// A non-RT thread (SCHED_OTHER even when started from an RT thread) that drains every ring
/// into one sink every 5 ms. Records of one ring keep their order; rings interleave in batches.
class SampleWriter {
 public:
  /// `rings` are not owned and must outlive the writer. Its thread runs off `measured_cpus`
  /// (the probes' CPUs) where other CPUs are online (core/cpus.h LeaveMeasuredCpus): waking
  /// every 5 ms on a probe's CPU would be the measurement's own interference.
  SampleWriter(std::vector<SampleRing*> rings, std::unique_ptr<SampleSink> sink,
               std::vector<int> measured_cpus = {});
  SampleWriter(const SampleWriter&) = delete;
  SampleWriter& operator=(const SampleWriter&) = delete;
  /// Joins the thread if Stop() was not called; the sink is then destroyed unfinished.
  ~SampleWriter();
  void Start();
  /// Call once every producer has stopped. Joins the thread, drains everything left (in the
  /// calling thread), finishes the sink with the rings' total drops and returns the first
  /// error seen. Works without Start() too (everything is drained here). After a write
  /// error the writer stops draining, so later records count as drops in the rings.
  Status Stop(bool interrupted);
  /// Records the sink accepted.
  uint64_t written() const { return written_.load(std::memory_order_relaxed); }
  /// Sum of the rings' drops.
  uint64_t dropped() const;

 private:
  void Loop();
  size_t DrainOnce();

  std::vector<SampleRing*> rings_;
  std::unique_ptr<SampleSink> sink_;
  std::vector<int> measured_cpus_;
  std::vector<SampleRecord> buffer_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> written_{0};
  Status error_;  // first error; the writer thread sets it, Stop() reads it after join
  bool stopped_ = false;
};

/// A latency run's sample sink: the samples file at `samples_path` (its header stamped with
/// the clocks now), else with `verbose` cyclictest -v's lines on stdout (every `oscope`-th),
/// else none (a null pointer).
Expected<std::unique_ptr<SampleSink>> OpenSampleSink(const std::string& samples_path, bool verbose,
                                                     int64_t oscope);

}  // namespace rtpulse::measure
