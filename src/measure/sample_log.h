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

namespace rtpulse::measure {

/// One activation as stored in a samples file: 32 bytes, host byte order (little-endian on
/// every supported target). docs/samples-format.md is the reference.
struct SampleRecord {
  uint64_t seq;         ///< Period index of the deadline (0 = first). A gap = skipped periods.
  int64_t expected_ns;  ///< Deadline, CLOCK_MONOTONIC.
  int64_t actual_ns;    ///< Wake-up time, CLOCK_MONOTONIC. latency = actual - expected.
  uint16_t thread;      ///< Probe thread index (as in cyclictest's T: N).
  uint16_t cpu;         ///< CPU the sample was taken on (the pinned CPU, else sched_getcpu()).
  uint8_t wake_path;    ///< measure::WakePath value.
  uint8_t flags;        ///< SampleRecord::kMissed, ...
  uint16_t reserved;    ///< Zero.

  static constexpr uint8_t kMissed = 1;  ///< Woke after the next period's deadline.
};
static_assert(sizeof(SampleRecord) == 32, "samples file record layout is part of the format");

/// actual_ns - expected_ns, wrapping instead of overflowing on garbage input (a corrupt file).
constexpr int64_t LatencyNs(const SampleRecord& record) {
  return static_cast<int64_t>(static_cast<uint64_t>(record.actual_ns) -
                              static_cast<uint64_t>(record.expected_ns));
}

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

/// Where drained records go: the binary samples file, or cyclictest -v text lines.
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  /// `count` may be 0: the writer's idle tick, so a buffering sink can flush on time.
  virtual Status Write(const SampleRecord* records, size_t count) = 0;
  /// Called once after the last Write. `dropped` is the total the rings could not hold.
  virtual Status Finish(uint64_t dropped, bool interrupted) = 0;
};

/// Metadata stored in a samples file header.
struct SamplesFileInfo {
  int64_t start_realtime_ns = 0;   ///< Wall clock at run start (for humans).
  int64_t start_monotonic_ns = 0;  ///< CLOCK_MONOTONIC at the same instant.
};

/// Binary samples file sink. Streams into "<path>.tmp.<pid>" and renames onto `path` in
/// Finish(), so a completed or interrupted run leaves a whole file; a crash leaves the .tmp
/// (readable, without trailer). The header is written at once, records in large buffered
/// writes (at least one per second, so a crash loses about a second at most). Destroyed
/// without Finish(): the .tmp is kept (flushed) if it holds records, removed if it does not.
Expected<std::unique_ptr<SampleSink>> OpenSamplesFile(const std::string& path,
                                                      const SamplesFileInfo& info);

/// cyclictest -v compatible text ("%8d:%8lu:%8ld" = thread:cycle:latency_us) to a FILE*,
/// which stays owned by the caller. cycle = seq; latency_us truncates toward zero.
std::unique_ptr<SampleSink> MakeVerboseSink(std::FILE* out);

/// A non-RT thread (SCHED_OTHER even when started from an RT thread) that drains every ring
/// into one sink every 5 ms. Records of one ring keep their order; rings interleave in batches.
class SampleWriter {
 public:
  /// `rings` are not owned and must outlive the writer.
  SampleWriter(std::vector<SampleRing*> rings, std::unique_ptr<SampleSink> sink);
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
  std::vector<SampleRecord> buffer_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> written_{0};
  Status error_;  // first error; the writer thread sets it, Stop() reads it after join
  bool stopped_ = false;
};

/// What a samples file says about itself, for `rtpulse samples`.
struct SamplesFileSummary {
  uint32_t version = 0;
  uint32_t clock_id = 0;  ///< 1 = CLOCK_MONOTONIC.
  SamplesFileInfo info;
  uint64_t records = 0;  ///< Whole records passed to `fn`.
  /// Bytes of a cut-off last record (only possible without trailer); not passed to `fn`.
  uint64_t partial_bytes = 0;
  bool has_trailer = false;  ///< false: the run did not end cleanly (file may be cut short)
  uint64_t dropped = 0;      ///< From the trailer.
  bool interrupted = false;  ///< From the trailer.
};

/// Reads a samples file (or a crashed run's "<path>.tmp.<pid>"), calling `fn` for every
/// record in file order. The layout is validated before the first call to `fn`, so a bad
/// file yields an error (UsageError, naming the file, the byte offset and the fix) and no
/// records; only an I/O error or a file shrinking during the read can fail midway.
Expected<SamplesFileSummary> ReadSamplesFile(const std::string& path,
                                             const std::function<void(const SampleRecord&)>& fn);

}  // namespace rtpulse::measure
