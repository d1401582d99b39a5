// The samples file format (docs/samples-format.md): its record, header and trailer, and
// the reader. In core, below every module: measure writes these files, report, the CLI and
// the importers read them, and none of them needs to see the others for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

/// The two layouts (docs/samples-format.md): 1 = fixed 32-byte records, 2 = checksummed,
/// compactly encoded blocks with a block index (the default of every writer).
enum class SamplesFormat : uint32_t { kV1 = 1, kV2 = 2 };

/// One block of a version 2 file, as its index (or a scan) describes it.
struct SamplesBlock {
  uint64_t offset = 0;  ///< Byte offset of the block header in the file.
  uint64_t first_seq = 0;
  int64_t first_expected_ns = 0;
  uint32_t count = 0;  ///< Records in the block.
};

/// Sizes and encoders for a writer (measure's file sink); readers use ReadSamplesFile.
namespace samples_format {
inline constexpr size_t kHeaderBytes = 64;
inline constexpr size_t kTrailerBytes = 32;
/// The 64-byte header for `info`.
void EncodeHeader(const SamplesFileInfo& info, std::byte* out);
/// The 32-byte trailer: records written, records dropped, interrupted flag.
void EncodeTrailer(uint64_t records, uint64_t dropped, bool interrupted, std::byte* out);

// Version 2.
inline constexpr size_t kV2BlockHeaderBytes = 40;
inline constexpr size_t kV2IndexEntryBytes = 32;
inline constexpr size_t kV2TrailerBytes = 48;
inline constexpr uint32_t kV2MaxBlockRecords = 4096;
/// The 64-byte version 2 header for `info`.
void EncodeHeaderV2(const SamplesFileInfo& info, std::byte* out);
/// Appends one block (header + payload) holding `records[0..count)` to `out`; 1 <= count <=
/// kV2MaxBlockRecords. Any field values round-trip exactly.
void AppendBlockV2(const SampleRecord* records, size_t count, std::vector<std::byte>& out);
/// The same bytes as AppendBlockV2 for the records {first_seq + i, 0, latency_ns[i], thread 0,
/// cpu 0xFFFF, wake_path 0, flags 0} (a source without deadlines or threads: import's one value
/// per line), written from the latencies alone: the first record explicit, the rest one run.
void AppendLatencyBlockV2(const int64_t* latency_ns, size_t count, uint64_t first_seq,
                          std::vector<std::byte>& out);
/// Appends the block index and the 48-byte trailer; `index_offset` is the file offset at
/// which the index starts (the end of the last block).
void AppendIndexAndTrailerV2(const std::vector<SamplesBlock>& blocks, uint64_t records,
                             uint64_t dropped, bool interrupted, uint64_t index_offset,
                             std::vector<std::byte>& out);
/// CRC-32C (Castagnoli), the checksum of every block, the index and the trailer.
uint32_t Crc32c(const std::byte* data, size_t n, uint32_t crc = 0);
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
  uint64_t blocks = 0;       ///< Version 2: whole blocks read.
  /// Version 2 without trailer: byte offset where the torn tail (partial_bytes) starts.
  uint64_t torn_offset = 0;
};

/// Reads a samples file (or a crashed run's "<path>.tmp.<pid>"), calling `fn` for every
/// record in file order. The layout is validated before the first call to `fn`, so a bad
/// file yields an error (UsageError, naming the file, the byte offset and the fix) and no
/// records; only an I/O error or a file shrinking during the read can fail midway.
///
/// Version 2: the header, the trailer and the block index are validated before the first
/// call; every block's checksum just before its records are passed on. A file without
/// trailer (a crash) yields every whole block up to the first damaged or cut-off one, and
/// says where that tail starts (torn_offset, partial_bytes). A damaged block in a finished
/// file is an error after the blocks before it were passed on.
Expected<SamplesFileSummary> ReadSamplesFile(const std::string& path,
                                             const std::function<void(const SampleRecord&)>& fn);

/// The blocks of a version 2 file: from its index, or by a scan of the whole blocks when
/// it has no trailer. A version 1 file is an error (it has no blocks).
Expected<std::vector<SamplesBlock>> ReadSamplesIndex(const std::string& path);

/// Random access: decodes the one block `block` (from ReadSamplesIndex) and passes its
/// records to `fn`; returns how many. A checksum mismatch is an error naming the offset.
Expected<uint64_t> ReadSamplesBlock(const std::string& path, const SamplesBlock& block,
                                    const std::function<void(const SampleRecord&)>& fn);

/// What `rtpulse samples --check` reports: every block checked, nothing trusted.
struct SamplesCheck {
  uint32_t version = 0;
  uint64_t file_bytes = 0;
  uint64_t records = 0;       ///< Records recovered (in whole, valid blocks or records).
  uint64_t blocks_whole = 0;  ///< Version 2.
  uint64_t blocks_bad = 0;    ///< Version 2: a block whose checksum or encoding is wrong.
  bool has_trailer = false;
  bool index_ok = false;     ///< Version 2: trailer + index present and matching the blocks.
  uint64_t torn_offset = 0;  ///< Where unreadable bytes start (meaningful if torn_bytes > 0).
  uint64_t torn_bytes = 0;   ///< Bytes from torn_offset to the index (or the end).
  std::string problem;       ///< Empty when whole; else what is wrong, in words.
  bool whole() const { return problem.empty(); }
};

/// Checks a samples file of either version. Errors only when the file cannot be read or is
/// not a samples file at all (bad magic, unknown version); damage is in the result.
Expected<SamplesCheck> CheckSamplesFile(const std::string& path);

}  // namespace rtpulse
