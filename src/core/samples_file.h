// The samples file format (docs/samples-format.md): its record, header and trailer, and
// the reader. In core, below every module: measure writes these files, report, the CLI and
// the importers read them, and none of them needs to see the others for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "core/error.h"

namespace rtpulse {

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

/// Metadata stored in a samples file header.
struct SamplesFileInfo {
  int64_t start_realtime_ns = 0;   ///< Wall clock at run start (for humans).
  int64_t start_monotonic_ns = 0;  ///< CLOCK_MONOTONIC at the same instant.
};

/// Sizes and encoders for a writer (measure's file sink); readers use ReadSamplesFile.
namespace samples_format {
inline constexpr size_t kHeaderBytes = 64;
inline constexpr size_t kTrailerBytes = 32;
/// The 64-byte header for `info`.
void EncodeHeader(const SamplesFileInfo& info, std::byte* out);
/// The 32-byte trailer: records written, records dropped, interrupted flag.
void EncodeTrailer(uint64_t records, uint64_t dropped, bool interrupted, std::byte* out);
}  // namespace samples_format

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

}  // namespace rtpulse
