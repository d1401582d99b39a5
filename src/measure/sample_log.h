#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
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
  uint16_t cpu;         ///< CPU the probe is pinned to; 0xFFFF when not pinned.
  uint8_t wake_path;    ///< measure::WakePath value.
  uint8_t flags;        ///< SampleRecord::kMissed, ...
  uint16_t reserved;    ///< Zero.

  static constexpr uint8_t kMissed = 1;  ///< Woke after the next period's deadline.
};
static_assert(sizeof(SampleRecord) == 32, "samples file record layout is part of the format");

/// Single-producer single-consumer ring: the probe thread pushes, the writer thread drains.
/// Preallocated and prefaulted; a push never allocates, locks or blocks.
class SampleRing {
 public:
  /// `capacity` is rounded up to a power of two.
  explicit SampleRing(size_t capacity);
  SampleRing(const SampleRing&) = delete;
  SampleRing& operator=(const SampleRing&) = delete;

  /// Producer side. Returns false (and counts a drop) when the ring is full.
  bool Push(const SampleRecord& record);
  /// Consumer side: moves up to `max` records into `out`, returns how many.
  size_t Drain(SampleRecord* out, size_t max);
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t pushed() const { return pushed_.load(std::memory_order_relaxed); }
  size_t capacity() const { return mask_ + 1; }

 private:
  std::vector<SampleRecord> slots_;
  size_t mask_;
  alignas(64) std::atomic<uint64_t> head_{0};  // next slot the producer writes
  alignas(64) std::atomic<uint64_t> tail_{0};  // next slot the consumer reads
  alignas(64) std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> pushed_{0};
};

/// Where drained records go: the binary samples file, or cyclictest -v text lines.
class SampleSink {
 public:
  virtual ~SampleSink() = default;
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
/// (readable, without trailer).
Expected<std::unique_ptr<SampleSink>> OpenSamplesFile(const std::string& path,
                                                      const SamplesFileInfo& info);

/// cyclictest -v compatible text ("%8d:%8lu:%8ld" = thread:cycle:latency_us) to a FILE*.
std::unique_ptr<SampleSink> MakeVerboseSink(std::FILE* out);

/// A non-RT thread that drains every ring into one sink every few milliseconds.
class SampleWriter {
 public:
  SampleWriter(std::vector<SampleRing*> rings, std::unique_ptr<SampleSink> sink);
  ~SampleWriter();
  void Start();
  /// Drains everything left, finishes the sink and joins the thread.
  Status Stop(bool interrupted);
  uint64_t written() const { return written_.load(std::memory_order_relaxed); }
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
  Status error_;
};

/// What a samples file says about itself, for `rtpulse samples`.
struct SamplesFileSummary {
  uint32_t version = 0;
  SamplesFileInfo info;
  uint64_t records = 0;
  bool has_trailer = false;  ///< false: the run did not end cleanly (file may be cut short)
  uint64_t dropped = 0;      ///< From the trailer.
  bool interrupted = false;  ///< From the trailer.
};

/// Reads a samples file, calling `fn` for every record. Errors name the file and offset.
Expected<SamplesFileSummary> ReadSamplesFile(
    const std::string& path, const std::function<void(const SampleRecord&)>& fn);

}  // namespace rtpulse::measure
