#include "core/samples_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

namespace rtpulse {

// The format is defined as little-endian and written in host order; byte swapping would be
// needed before rtpulse could run on a big-endian target.
static_assert(std::endian::native == std::endian::little,
              "samples files are little-endian: add byte swapping for this target");
static_assert(offsetof(SampleRecord, seq) == 0 && offsetof(SampleRecord, expected_ns) == 8 &&
                  offsetof(SampleRecord, actual_ns) == 16 && offsetof(SampleRecord, thread) == 24 &&
                  offsetof(SampleRecord, cpu) == 26 && offsetof(SampleRecord, wake_path) == 28 &&
                  offsetof(SampleRecord, flags) == 29 && offsetof(SampleRecord, reserved) == 30,
              "record field offsets are documented in docs/samples-format.md");

namespace {

using samples_format::kHeaderBytes;
using samples_format::kTrailerBytes;
constexpr std::string_view kHeaderMagic = "RTPSMPL1";
constexpr std::string_view kTrailerMagic = "RTPSEND1";
constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kFormatVersionV2 = 2;
// A reader accepts blocks up to this many records (the writer uses kV2MaxBlockRecords).
constexpr uint32_t kV2ReaderMaxBlock = 1U << 16;
constexpr size_t kRecordBytes = sizeof(SampleRecord);
constexpr uint32_t kClockMonotonic = 1;
constexpr uint32_t kTrailerInterrupted = 1;
constexpr size_t kReadChunkRecords = 4096;

// Header field offsets.
constexpr size_t kOffVersion = 8;
constexpr size_t kOffHeaderBytes = 12;
constexpr size_t kOffRecordBytes = 16;
constexpr size_t kOffClockId = 20;
constexpr size_t kOffStartRealtime = 24;
constexpr size_t kOffStartMonotonic = 32;
// Trailer field offsets (relative to the trailer).
constexpr size_t kOffTrailerCount = 8;
constexpr size_t kOffTrailerDropped = 16;
constexpr size_t kOffTrailerFlags = 24;

// 1 MiB: few syscalls even at 100k records/s, and a whole number of records.
template <typename T>
void Put(std::byte* out, size_t offset, T value) {
  std::memcpy(out + offset, &value, sizeof(T));
}

template <typename T>
T Get(const std::byte* in, size_t offset) {
  T value;
  std::memcpy(&value, in + offset, sizeof(T));
  return value;
}

std::string ErrnoText(int err) {
  return std::strerror(err);
}

// ---- Reader ----------------------------------------------------------------------------

class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Magic bytes as text, with anything unprintable escaped, for error messages.
std::string Printable(const std::byte* bytes, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    const auto c = std::to_integer<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

// Every complaint about a file names it, the byte offset and what to do.
Error BadFile(const std::string& path, uint64_t offset, std::string_view what,
              std::string_view fix) {
  return UsageError(
      fmt::format("samples file '{}', byte offset {}: {}; {}", path, offset, what, fix));
}

constexpr std::string_view kNotOurs = "give a file written by 'rtpulse latency --samples'";
constexpr std::string_view kCorrupt = "the file was modified or corrupted after it was written";

// Reads exactly `n` bytes at `offset`; false with errno set (0 = the file ended early).
bool ReadAt(int fd, std::byte* out, size_t n, uint64_t offset) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, out, n, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (got == 0) {
      errno = 0;
      return false;
    }
    out += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

Error ReadError(const std::string& path, uint64_t offset) {
  const int err = errno;
  if (err == 0) {
    return BadFile(path, offset, "the file ended early (it shrank while being read)",
                   "read it again once the writer has finished");
  }
  return UsageError(fmt::format("cannot read samples file '{}' at byte offset {}: {}", path, offset,
                                ErrnoText(err)));
}

Status CheckMagic(const std::string& path, const std::byte* h) {
  if (std::memcmp(h, kHeaderMagic.data(), kHeaderMagic.size()) == 0) return Status::Ok();
  return BadFile(path, 0,
                 fmt::format("magic is \"{}\", expected \"{}\": not an rtpulse samples file",
                             Printable(h, kHeaderMagic.size()), kHeaderMagic),
                 kNotOurs);
}

// The fields after the magic.
Status CheckHeader(const std::string& path, const std::byte* h, SamplesFileSummary& summary) {
  summary.version = Get<uint32_t>(h, kOffVersion);
  if (summary.version != kFormatVersion && summary.version != kFormatVersionV2) {
    return BadFile(path, kOffVersion,
                   fmt::format("format version {} is not supported (this rtpulse reads 1 and 2)",
                               summary.version),
                   "read it with the rtpulse version that wrote it");
  }
  summary.clock_id = Get<uint32_t>(h, kOffClockId);
  summary.info.start_realtime_ns = Get<int64_t>(h, kOffStartRealtime);
  summary.info.start_monotonic_ns = Get<int64_t>(h, kOffStartMonotonic);
  if (summary.version == kFormatVersionV2) {
    if (const auto n = Get<uint32_t>(h, kOffHeaderBytes); n != kHeaderBytes) {
      return BadFile(path, kOffHeaderBytes,
                     fmt::format("header size is {}, version 2 requires {}", n, kHeaderBytes),
                     kCorrupt);
    }
    if (const auto n = Get<uint32_t>(h, kOffRecordBytes); n == 0 || n > kV2ReaderMaxBlock) {
      return BadFile(
          path, kOffRecordBytes,
          fmt::format("block size is {} records, version 2 allows 1 to {}", n, kV2ReaderMaxBlock),
          kCorrupt);
    }
    return Status::Ok();
  }
  if (const auto n = Get<uint32_t>(h, kOffHeaderBytes); n != kHeaderBytes) {
    return BadFile(path, kOffHeaderBytes,
                   fmt::format("header size is {}, version 1 requires {}", n, kHeaderBytes),
                   kCorrupt);
  }
  if (const auto n = Get<uint32_t>(h, kOffRecordBytes); n != kRecordBytes) {
    return BadFile(path, kOffRecordBytes,
                   fmt::format("record size is {}, version 1 requires {}", n, kRecordBytes),
                   kCorrupt);
  }
  summary.clock_id = Get<uint32_t>(h, kOffClockId);
  summary.info.start_realtime_ns = Get<int64_t>(h, kOffStartRealtime);
  summary.info.start_monotonic_ns = Get<int64_t>(h, kOffStartMonotonic);
  return Status::Ok();
}

// Looks for the trailer in the last 32 bytes and works out how many records precede it.
Status LocateRecords(const std::string& path, int fd, uint64_t size, SamplesFileSummary& summary) {
  const uint64_t body = size - kHeaderBytes;
  std::byte t[kTrailerBytes];
  if (body >= kTrailerBytes) {
    const uint64_t at = size - kTrailerBytes;
    if (!ReadAt(fd, t, kTrailerBytes, at)) return ReadError(path, at);
    summary.has_trailer = std::memcmp(t, kTrailerMagic.data(), kTrailerMagic.size()) == 0;
  }
  if (!summary.has_trailer) {
    // A crash (or a run still writing): whole records, maybe one cut short at the end.
    summary.records = body / kRecordBytes;
    summary.partial_bytes = body % kRecordBytes;
    return Status::Ok();
  }
  const uint64_t at = size - kTrailerBytes;
  const uint64_t payload = body - kTrailerBytes;
  if (payload % kRecordBytes != 0) {
    return BadFile(path, at - payload % kRecordBytes,
                   fmt::format("{} stray bytes before the trailer (records are {} bytes)",
                               payload % kRecordBytes, kRecordBytes),
                   kCorrupt);
  }
  summary.records = payload / kRecordBytes;
  const auto count = Get<uint64_t>(t, kOffTrailerCount);
  if (count != summary.records) {
    return BadFile(
        path, at + kOffTrailerCount,
        fmt::format("the trailer counts {} records but the file holds {}", count, summary.records),
        kCorrupt);
  }
  summary.dropped = Get<uint64_t>(t, kOffTrailerDropped);
  summary.interrupted = (Get<uint32_t>(t, kOffTrailerFlags) & kTrailerInterrupted) != 0;
  return Status::Ok();
}

// ---- Version 2 ---------------------------------------------------------------------------

using samples_format::kV2BlockHeaderBytes;
using samples_format::kV2IndexEntryBytes;
using samples_format::kV2TrailerBytes;
constexpr std::string_view kV2BlockMagic = "RTPB";
constexpr std::string_view kV2TrailerMagic = "RTPSEND2";
constexpr uint8_t kV2EncodingRaw = 0;
constexpr uint8_t kV2EncodingPredicted = 1;
// Block header field offsets.
constexpr size_t kOffBlockPayload = 4;
constexpr size_t kOffBlockCount = 8;
constexpr size_t kOffBlockCrc = 12;
constexpr size_t kOffBlockFirstSeq = 16;
constexpr size_t kOffBlockFirstExpected = 24;
constexpr size_t kOffBlockEncoding = 32;
// Trailer field offsets (records, dropped, flags as in version 1).
constexpr size_t kOffV2IndexOffset = 32;
constexpr size_t kOffV2Crc = 40;

uint64_t ZigZag(uint64_t v) {
  return (v << 1) ^ (0 - (v >> 63));
}
uint64_t UnZigZag(uint64_t v) {
  return (v >> 1) ^ (0 - (v & 1));
}

// LEB128 into memory the caller sized for it (at most kMaxVarintBytes); returns the end.
constexpr size_t kMaxVarintBytes = 10;
std::byte* PutVarint(std::byte* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<std::byte>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::byte>(v);
  return p;
}

// Per-thread prediction state, the same in encoder and decoder.
struct V2ThreadState {
  uint16_t thread = 0;
  uint64_t seq = 0;
  uint64_t expected = 0;  // wrapping arithmetic: every int64 value round-trips
  uint64_t latency = 0;
  uint64_t period = 0;
  uint16_t cpu = 0;
  uint8_t wake = 0;
};

class V2States {
 public:
  // The state of `thread`, or nullptr before its first record in the block.
  V2ThreadState* Find(uint16_t thread) {
    if (last_ < states_.size() && states_[last_].thread == thread) return &states_[last_];
    for (size_t i = 0; i < states_.size(); ++i) {
      if (states_[i].thread == thread) {
        last_ = i;
        return &states_[i];
      }
    }
    return nullptr;
  }
  V2ThreadState* Add(uint16_t thread) {
    states_.push_back(V2ThreadState{});
    states_.back().thread = thread;
    last_ = states_.size() - 1;
    return &states_.back();
  }

 private:
  std::vector<V2ThreadState> states_;
  size_t last_ = 0;
};

// After an explicit record: the period is the step from the previous record of the thread
// when it is the next period, else unchanged (0 for a thread's first record).
void V2Update(V2ThreadState& s, bool had_state, const SampleRecord& r) {
  const auto expected = static_cast<uint64_t>(r.expected_ns);
  if (had_state && r.seq == s.seq + 1) s.period = expected - s.expected;
  if (!had_state) s.period = 0;
  s.seq = r.seq;
  s.expected = expected;
  s.latency = static_cast<uint64_t>(r.actual_ns) - expected;
  s.cpu = r.cpu;
  s.wake = r.wake_path;
}

bool V2IsRegular(const V2ThreadState& s, const SampleRecord& r) {
  return r.seq == s.seq + 1 && static_cast<uint64_t>(r.expected_ns) == s.expected + s.period &&
         r.cpu == s.cpu && r.wake_path == s.wake && r.flags == 0 && r.reserved == 0;
}

// The predicted payload of `records` (docs/samples-format.md, "Block payload"), appended to
// `out`. Written through raw pointers into scratch buffers sized for the worst case and kept
// by the thread, so a block costs no allocation once they have grown: the encoder is the
// writer's (and import's) inner loop.
void V2EncodePredicted(const SampleRecord* records, size_t count, std::vector<std::byte>& out) {
  // Worst case per record: it closes a run (two varints) and is explicit (six varints and two
  // bytes).
  constexpr size_t kWorstPerRecord = 8 * kMaxVarintBytes + 2;
  thread_local std::vector<std::byte> payload_buffer;
  thread_local std::vector<std::byte> run_buffer;  // deltas of the open run
  if (payload_buffer.size() < count * kWorstPerRecord)
    payload_buffer.resize(count * kWorstPerRecord);
  if (run_buffer.size() < count * kMaxVarintBytes) run_buffer.resize(count * kMaxVarintBytes);
  std::byte* p = payload_buffer.data();
  std::byte* const run = run_buffer.data();
  std::byte* run_end = run;
  V2States states;
  uint16_t run_thread = 0;
  uint64_t run_count = 0;
  auto close_run = [&] {
    if (run_count == 0) return;
    p = PutVarint(p, uint64_t{run_thread} << 1);
    p = PutVarint(p, run_count);
    const auto bytes = static_cast<size_t>(run_end - run);
    std::memcpy(p, run, bytes);
    p += bytes;
    run_end = run;
    run_count = 0;
  };
  for (size_t i = 0; i < count; ++i) {
    const SampleRecord& r = records[i];
    V2ThreadState* s = states.Find(r.thread);
    if (s != nullptr && V2IsRegular(*s, r)) {
      if (run_count > 0 && run_thread != r.thread) close_run();
      run_thread = r.thread;
      ++run_count;
      const uint64_t latency = static_cast<uint64_t>(r.actual_ns) - s->expected - s->period;
      run_end = PutVarint(run_end, ZigZag(latency - s->latency));
      s->seq = r.seq;
      s->expected += s->period;
      s->latency = latency;
      continue;
    }
    close_run();
    const bool had = s != nullptr;
    if (!had) s = states.Add(r.thread);
    const uint64_t pred_seq = had ? s->seq + 1 : 0;
    const uint64_t pred_expected = had ? s->expected + s->period : 0;
    const uint64_t pred_latency = had ? s->latency : 0;
    const auto expected = static_cast<uint64_t>(r.expected_ns);
    p = PutVarint(p, (uint64_t{r.thread} << 1) | 1);
    p = PutVarint(p, ZigZag(r.seq - pred_seq));
    p = PutVarint(p, ZigZag(expected - pred_expected));
    p = PutVarint(p, ZigZag(static_cast<uint64_t>(r.actual_ns) - expected - pred_latency));
    p = PutVarint(p, r.cpu);
    *p++ = static_cast<std::byte>(r.wake_path);
    *p++ = static_cast<std::byte>(r.flags);
    p = PutVarint(p, r.reserved);
    V2Update(*s, had, r);
  }
  close_run();
  out.insert(out.end(), payload_buffer.data(), p);
}

class V2Cursor {
 public:
  V2Cursor(const std::byte* p, size_t n) : p_(p), end_(p + n) {}
  bool Varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const auto b = std::to_integer<uint64_t>(*p_++);
      if (shift == 63 && b > 1) return false;  // more than 64 bits
      v |= (b & 0x7f) << shift;
      if (b < 0x80) return true;
    }
    return false;
  }
  bool Byte(uint8_t& v) {
    if (p_ == end_) return false;
    v = std::to_integer<uint8_t>(*p_++);
    return true;
  }
  bool done() const { return p_ == end_; }

 private:
  const std::byte* p_;
  const std::byte* end_;
};

// Decodes a predicted payload into `out` (exactly `count` records); false with `why` set
// when the payload does not decode to exactly that.
bool V2DecodePredicted(const std::byte* payload, size_t bytes, size_t count,
                       std::vector<SampleRecord>& out, std::string& why) {
  V2States states;
  V2Cursor in(payload, bytes);
  out.clear();
  while (out.size() < count) {
    uint64_t head = 0;
    if (!in.Varint(head)) return why = "the payload ends inside an item", false;
    if ((head >> 1) > 0xFFFF) return why = "a thread index above 65535", false;
    const auto thread = static_cast<uint16_t>(head >> 1);
    V2ThreadState* s = states.Find(thread);
    if ((head & 1) == 0) {
      uint64_t n = 0;
      if (!in.Varint(n) || n == 0 || n > count - out.size()) {
        return why = "a run of a wrong length", false;
      }
      if (s == nullptr) return why = "a run of a thread before its first record", false;
      for (uint64_t k = 0; k < n; ++k) {
        uint64_t d = 0;
        if (!in.Varint(d)) return why = "the payload ends inside a run", false;
        s->seq += 1;
        s->expected += s->period;
        s->latency += UnZigZag(d);
        SampleRecord r{};
        r.seq = s->seq;
        r.expected_ns = static_cast<int64_t>(s->expected);
        r.actual_ns = static_cast<int64_t>(s->expected + s->latency);
        r.thread = thread;
        r.cpu = s->cpu;
        r.wake_path = s->wake;
        out.push_back(r);
      }
      continue;
    }
    const bool had = s != nullptr;
    if (!had) s = states.Add(thread);
    uint64_t dseq = 0;
    uint64_t dexp = 0;
    uint64_t dlat = 0;
    uint64_t cpu = 0;
    uint64_t reserved = 0;
    SampleRecord r{};
    if (!in.Varint(dseq) || !in.Varint(dexp) || !in.Varint(dlat) || !in.Varint(cpu) ||
        !in.Byte(r.wake_path) || !in.Byte(r.flags) || !in.Varint(reserved)) {
      return why = "the payload ends inside a record", false;
    }
    if (cpu > 0xFFFF || reserved > 0xFFFF) return why = "a 16-bit field above 65535", false;
    const uint64_t expected = (had ? s->expected + s->period : 0) + UnZigZag(dexp);
    r.seq = (had ? s->seq + 1 : 0) + UnZigZag(dseq);
    r.expected_ns = static_cast<int64_t>(expected);
    r.actual_ns = static_cast<int64_t>(expected + (had ? s->latency : 0) + UnZigZag(dlat));
    r.thread = thread;
    r.cpu = static_cast<uint16_t>(cpu);
    r.reserved = static_cast<uint16_t>(reserved);
    V2Update(*s, had, r);
    out.push_back(r);
  }
  if (!in.done()) return why = "bytes left over after the last record", false;
  return true;
}

// Reads and checks the block at `offset`; false with `why` when it is cut off or damaged.
bool V2ReadBlock(int fd, uint64_t offset, uint64_t end, uint32_t max_records,
                 std::vector<std::byte>& scratch, std::vector<SampleRecord>& out,
                 SamplesBlock& block, std::string& why) {
  if (end < offset || end - offset < kV2BlockHeaderBytes) {
    why = fmt::format("{} bytes, less than a block header", end > offset ? end - offset : 0);
    return false;
  }
  std::byte h[kV2BlockHeaderBytes];
  if (!ReadAt(fd, h, sizeof(h), offset)) {
    why = errno == 0 ? "the file ended early" : ErrnoText(errno);
    return false;
  }
  if (std::memcmp(h, kV2BlockMagic.data(), kV2BlockMagic.size()) != 0) {
    why = fmt::format("no block starts here (\"{}\" instead of \"RTPB\")", Printable(h, 4));
    return false;
  }
  const auto payload = Get<uint32_t>(h, kOffBlockPayload);
  const auto count = Get<uint32_t>(h, kOffBlockCount);
  const auto encoding = Get<uint8_t>(h, kOffBlockEncoding);
  if (count == 0 || count > max_records) {
    why = fmt::format("a block of {} records (1 to {} allowed)", count, max_records);
    return false;
  }
  if (payload > end - offset - kV2BlockHeaderBytes) {
    why = fmt::format("a block of {} payload bytes, {} are left: cut off", payload,
                      end - offset - kV2BlockHeaderBytes);
    return false;
  }
  scratch.resize(payload);
  if (!ReadAt(fd, scratch.data(), payload, offset + kV2BlockHeaderBytes)) {
    why = errno == 0 ? "the file ended early" : ErrnoText(errno);
    return false;
  }
  const auto stored_crc = Get<uint32_t>(h, kOffBlockCrc);
  Put<uint32_t>(h, kOffBlockCrc, 0);
  const uint32_t crc =
      samples_format::Crc32c(scratch.data(), payload, samples_format::Crc32c(h, sizeof(h)));
  if (crc != stored_crc) {
    why = fmt::format("checksum mismatch (stored {:08x}, computed {:08x})", stored_crc, crc);
    return false;
  }
  if (encoding == kV2EncodingRaw) {
    if (payload != uint64_t{count} * kRecordBytes) {
      why = "a raw block whose size is not its records";
      return false;
    }
    out.resize(count);
    std::memcpy(out.data(), scratch.data(), payload);
  } else if (encoding == kV2EncodingPredicted) {
    if (!V2DecodePredicted(scratch.data(), payload, count, out, why)) return false;
  } else {
    why = fmt::format("unknown block encoding {}", encoding);
    return false;
  }
  block.offset = offset;
  block.count = count;
  block.first_seq = Get<uint64_t>(h, kOffBlockFirstSeq);
  block.first_expected_ns = Get<int64_t>(h, kOffBlockFirstExpected);
  if (block.first_seq != out[0].seq || block.first_expected_ns != out[0].expected_ns) {
    why = "the block header's first record does not match its payload";
    return false;
  }
  return true;
}

// The trailer + index of a version 2 file, when its last bytes are a trailer.
struct V2Tail {
  bool present = false;
  uint64_t index_offset = 0;
  uint64_t records = 0;
  uint64_t dropped = 0;
  bool interrupted = false;
  std::vector<SamplesBlock> blocks;
};

// Reads the trailer and index; a trailer that is there but wrong is an error (`why`).
bool V2ReadTail(int fd, uint64_t size, V2Tail& tail, std::string& why, uint64_t& where) {
  if (size < kHeaderBytes + kV2TrailerBytes) return true;
  std::byte t[kV2TrailerBytes];
  where = size - kV2TrailerBytes;
  if (!ReadAt(fd, t, sizeof(t), where)) return why = "cannot read the trailer", false;
  if (std::memcmp(t, kV2TrailerMagic.data(), kV2TrailerMagic.size()) != 0) return true;
  tail.present = true;
  tail.records = Get<uint64_t>(t, kOffTrailerCount);
  tail.dropped = Get<uint64_t>(t, kOffTrailerDropped);
  tail.interrupted = (Get<uint32_t>(t, kOffTrailerFlags) & kTrailerInterrupted) != 0;
  tail.index_offset = Get<uint64_t>(t, kOffV2IndexOffset);
  if (tail.index_offset < kHeaderBytes || tail.index_offset > size - kV2TrailerBytes ||
      (size - kV2TrailerBytes - tail.index_offset) % kV2IndexEntryBytes != 0) {
    where += kOffV2IndexOffset;
    why = fmt::format("the trailer's index offset {} does not fit a {}-byte file",
                      tail.index_offset, size);
    return false;
  }
  const uint64_t index_bytes = size - kV2TrailerBytes - tail.index_offset;
  std::vector<std::byte> index(index_bytes);
  if (!ReadAt(fd, index.data(), index.size(), tail.index_offset)) {
    return why = "cannot read the block index", false;
  }
  const uint32_t crc =
      samples_format::Crc32c(t, kOffV2Crc, samples_format::Crc32c(index.data(), index.size()));
  if (crc != Get<uint32_t>(t, kOffV2Crc)) {
    where = tail.index_offset;
    why = "the block index or trailer checksum does not match";
    return false;
  }
  uint64_t total = 0;
  for (uint64_t at = 0; at < index_bytes; at += kV2IndexEntryBytes) {
    SamplesBlock b;
    b.offset = Get<uint64_t>(index.data(), at);
    b.first_seq = Get<uint64_t>(index.data(), at + 8);
    b.first_expected_ns = Get<int64_t>(index.data(), at + 16);
    b.count = Get<uint32_t>(index.data(), at + 24);
    const uint64_t min_offset = tail.blocks.empty() ? kHeaderBytes : tail.blocks.back().offset + 1;
    if (b.offset < min_offset || b.offset >= tail.index_offset) {
      where = tail.index_offset + at;
      why = fmt::format("index entry {} points at byte {}, outside the blocks", at / 32, b.offset);
      return false;
    }
    total += b.count;
    tail.blocks.push_back(b);
  }
  if (total != tail.records) {
    where = size - kV2TrailerBytes + kOffTrailerCount;
    why = fmt::format("the trailer counts {} records but the index {}", tail.records, total);
    return false;
  }
  return true;
}

bool SameBlock(const SamplesBlock& a, const SamplesBlock& b) {
  return a.offset == b.offset && a.count == b.count && a.first_seq == b.first_seq &&
         a.first_expected_ns == b.first_expected_ns;
}

// An open, validated file: header checked, size known.
struct OpenedSamples {
  int fd = -1;
  uint64_t size = 0;
  SamplesFileSummary summary;
  uint32_t max_block = 0;
};

}  // namespace

namespace samples_format {

void EncodeHeader(const SamplesFileInfo& info, std::byte* out) {
  std::memset(out, 0, kHeaderBytes);
  std::memcpy(out, kHeaderMagic.data(), kHeaderMagic.size());
  Put<uint32_t>(out, kOffVersion, kFormatVersion);
  Put<uint32_t>(out, kOffHeaderBytes, static_cast<uint32_t>(kHeaderBytes));
  Put<uint32_t>(out, kOffRecordBytes, static_cast<uint32_t>(kRecordBytes));
  Put<uint32_t>(out, kOffClockId, kClockMonotonic);
  Put<int64_t>(out, kOffStartRealtime, info.start_realtime_ns);
  Put<int64_t>(out, kOffStartMonotonic, info.start_monotonic_ns);
}

void EncodeTrailer(uint64_t records, uint64_t dropped, bool interrupted, std::byte* out) {
  std::memset(out, 0, kTrailerBytes);
  std::memcpy(out, kTrailerMagic.data(), kTrailerMagic.size());
  Put<uint64_t>(out, kOffTrailerCount, records);
  Put<uint64_t>(out, kOffTrailerDropped, dropped);
  Put<uint32_t>(out, kOffTrailerFlags, interrupted ? kTrailerInterrupted : 0);
}

void EncodeHeaderV2(const SamplesFileInfo& info, std::byte* out) {
  EncodeHeader(info, out);
  Put<uint32_t>(out, kOffVersion, kFormatVersionV2);
  Put<uint32_t>(out, kOffRecordBytes, kV2MaxBlockRecords);  // version 2: max block records
}

uint32_t Crc32c(const std::byte* data, size_t n, uint32_t crc) {
  static const auto table = [] {
    std::array<std::array<uint32_t, 256>, 8> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78U & (0U - (c & 1U)));
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (size_t k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
    }
    return t;
  }();
  crc = ~crc;
  while (n >= 8) {  // slicing by 8
    uint64_t w = 0;
    std::memcpy(&w, data, 8);
    w ^= crc;
    crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
          table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
          table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
    data += 8;
    n -= 8;
  }
  for (size_t i = 0; i < n; ++i) {
    crc = (crc >> 8) ^ table[0][(crc ^ std::to_integer<uint32_t>(data[i])) & 0xff];
  }
  return ~crc;
}

void AppendBlockV2(const SampleRecord* records, size_t count, std::vector<std::byte>& out) {
  const size_t start = out.size();
  out.resize(start + kV2BlockHeaderBytes);
  V2EncodePredicted(records, count, out);
  uint8_t encoding = kV2EncodingPredicted;
  size_t payload = out.size() - start - kV2BlockHeaderBytes;
  if (payload >= count * kRecordBytes) {  // garbage does not predict: store it as it is
    out.resize(start + kV2BlockHeaderBytes);
    const auto* raw = reinterpret_cast<const std::byte*>(records);
    out.insert(out.end(), raw, raw + count * kRecordBytes);
    encoding = kV2EncodingRaw;
    payload = count * kRecordBytes;
  }
  std::byte* h = out.data() + start;
  std::memset(h, 0, kV2BlockHeaderBytes);
  std::memcpy(h, kV2BlockMagic.data(), kV2BlockMagic.size());
  Put<uint32_t>(h, kOffBlockPayload, static_cast<uint32_t>(payload));
  Put<uint32_t>(h, kOffBlockCount, static_cast<uint32_t>(count));
  Put<uint64_t>(h, kOffBlockFirstSeq, records[0].seq);
  Put<int64_t>(h, kOffBlockFirstExpected, records[0].expected_ns);
  Put<uint8_t>(h, kOffBlockEncoding, encoding);
  const uint32_t crc = Crc32c(h + kV2BlockHeaderBytes, payload, Crc32c(h, kV2BlockHeaderBytes));
  Put<uint32_t>(h, kOffBlockCrc, crc);
}

void AppendLatencyBlockV2(const int64_t* latency_ns, size_t count, uint64_t first_seq,
                          std::vector<std::byte>& out) {
  // Record 0 is the thread's first in the block: explicit against predictions of 0. Every
  // later one is regular (seq + 1, deadline 0 + period 0, same cpu and wake path, no flags),
  // so the rest is one run. At most 10 bytes a record: never worse than raw (32). Encoded
  // in a scratch buffer kept by the thread (growing `out` would zero the worst case first).
  thread_local std::vector<std::byte> payload_buffer;
  const size_t worst = 8 * kMaxVarintBytes + 2 + count * kMaxVarintBytes;
  if (payload_buffer.size() < worst) payload_buffer.resize(worst);
  std::byte* const begin = payload_buffer.data();
  std::byte* p = begin;
  p = PutVarint(p, 1);  // thread 0, explicit
  p = PutVarint(p, ZigZag(first_seq));
  p = PutVarint(p, 0);  // expected - 0
  p = PutVarint(p, ZigZag(static_cast<uint64_t>(latency_ns[0])));
  p = PutVarint(p, 0xFFFF);  // cpu
  *p++ = std::byte{0};       // wake_path
  *p++ = std::byte{0};       // flags
  p = PutVarint(p, 0);       // reserved
  if (count > 1) {
    p = PutVarint(p, 0);  // thread 0, a run
    p = PutVarint(p, count - 1);
    for (size_t i = 1; i < count; ++i) {
      p = PutVarint(p, ZigZag(static_cast<uint64_t>(latency_ns[i]) -
                              static_cast<uint64_t>(latency_ns[i - 1])));
    }
  }
  const auto payload = static_cast<size_t>(p - begin);
  const size_t start = out.size();
  out.resize(start + kV2BlockHeaderBytes);
  out.insert(out.end(), begin, p);
  std::byte* const h = out.data() + start;
  std::memset(h, 0, kV2BlockHeaderBytes);
  std::memcpy(h, kV2BlockMagic.data(), kV2BlockMagic.size());
  Put<uint32_t>(h, kOffBlockPayload, static_cast<uint32_t>(payload));
  Put<uint32_t>(h, kOffBlockCount, static_cast<uint32_t>(count));
  Put<uint64_t>(h, kOffBlockFirstSeq, first_seq);
  Put<int64_t>(h, kOffBlockFirstExpected, 0);
  Put<uint8_t>(h, kOffBlockEncoding, kV2EncodingPredicted);
  const uint32_t crc = Crc32c(h + kV2BlockHeaderBytes, payload, Crc32c(h, kV2BlockHeaderBytes));
  Put<uint32_t>(h, kOffBlockCrc, crc);
}

void AppendIndexAndTrailerV2(const std::vector<SamplesBlock>& blocks, uint64_t records,
                             uint64_t dropped, bool interrupted, uint64_t index_offset,
                             std::vector<std::byte>& out) {
  const size_t start = out.size();
  const size_t index_bytes = blocks.size() * kV2IndexEntryBytes;
  out.resize(start + index_bytes + kV2TrailerBytes);
  std::byte* p = out.data() + start;
  for (const SamplesBlock& b : blocks) {
    std::memset(p, 0, kV2IndexEntryBytes);
    Put<uint64_t>(p, 0, b.offset);
    Put<uint64_t>(p, 8, b.first_seq);
    Put<int64_t>(p, 16, b.first_expected_ns);
    Put<uint32_t>(p, 24, b.count);
    p += kV2IndexEntryBytes;
  }
  EncodeTrailer(records, dropped, interrupted, p);  // the first 32 bytes as in version 1 ...
  std::memcpy(p, kV2TrailerMagic.data(), kV2TrailerMagic.size());  // ... with its own magic
  std::memset(p + kTrailerBytes, 0, kV2TrailerBytes - kTrailerBytes);
  Put<uint64_t>(p, kOffV2IndexOffset, index_offset);
  const uint32_t crc = Crc32c(p, kOffV2Crc, Crc32c(out.data() + start, index_bytes));
  Put<uint32_t>(p, kOffV2Crc, crc);
}

}  // namespace samples_format

// ---- Reader -----------------------------------------------------------------------------

namespace {

// Opens `path` and validates its header (either version) into `opened`.
Status OpenSamples(const std::string& path, ScopedFd& fd, OpenedSamples& opened) {
  if (fd.get() < 0) {
    return UsageError(
        fmt::format("cannot read samples file '{}': {} (check the path)", path, ErrnoText(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return UsageError(fmt::format("cannot read samples file '{}': {}", path, ErrnoText(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return UsageError(
        fmt::format("samples file '{}' is not a regular file; give the file itself", path));
  }
  const auto size = static_cast<uint64_t>(st.st_size);

  // The magic first, so a short text file is called what it is rather than "too short".
  std::byte header[kHeaderBytes] = {};
  const auto have = static_cast<size_t>(std::min<uint64_t>(size, kHeaderBytes));
  if (!ReadAt(fd.get(), header, have, 0)) return ReadError(path, 0);
  const bool magic_ok = have >= kHeaderMagic.size();
  if (magic_ok) {
    if (Status s = CheckMagic(path, header); !s) return s;
  }
  if (size < kHeaderBytes) {
    return BadFile(
        path, size,
        fmt::format("the file ends after {} bytes, inside the {}-byte header", size, kHeaderBytes),
        magic_ok ? "its writer stopped before any sample was stored; there is nothing to read"
                 : kNotOurs);
  }
  opened.fd = fd.get();
  opened.size = size;
  if (Status s = CheckHeader(path, header, opened.summary); !s) return s;
  opened.max_block = Get<uint32_t>(header, kOffRecordBytes);
  return Status::Ok();
}

Expected<SamplesFileSummary> ReadV1(const std::string& path, OpenedSamples& opened,
                                    const std::function<void(const SampleRecord&)>& fn) {
  SamplesFileSummary& summary = opened.summary;
  if (Status s = LocateRecords(path, opened.fd, opened.size, summary); !s) return s.error();
  std::vector<SampleRecord> chunk(kReadChunkRecords);
  uint64_t offset = kHeaderBytes;
  for (uint64_t left = summary.records; left > 0;) {
    const auto n = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
    if (!ReadAt(opened.fd, reinterpret_cast<std::byte*>(chunk.data()), n * kRecordBytes, offset)) {
      return ReadError(path, offset);
    }
    for (size_t i = 0; i < n; ++i) fn(chunk[i]);
    left -= n;
    offset += n * kRecordBytes;
  }
  return summary;
}

Expected<SamplesFileSummary> ReadV2(const std::string& path, OpenedSamples& opened,
                                    const std::function<void(const SampleRecord&)>& fn) {
  SamplesFileSummary& summary = opened.summary;
  V2Tail tail;
  std::string why;
  uint64_t where = 0;
  if (!V2ReadTail(opened.fd, opened.size, tail, why, where)) {
    return BadFile(path, where, why, kCorrupt);
  }
  std::vector<std::byte> scratch;
  std::vector<SampleRecord> records;
  SamplesBlock block;
  if (tail.present) {
    summary.has_trailer = true;
    summary.dropped = tail.dropped;
    summary.interrupted = tail.interrupted;
    for (size_t i = 0; i < tail.blocks.size(); ++i) {
      const SamplesBlock& want = tail.blocks[i];
      const uint64_t end =
          i + 1 < tail.blocks.size() ? tail.blocks[i + 1].offset : tail.index_offset;
      if (!V2ReadBlock(opened.fd, want.offset, end, opened.max_block, scratch, records, block,
                       why)) {
        return BadFile(path, want.offset, fmt::format("block {}: {}", i, why),
                       "the file was damaged after it was written; 'rtpulse samples --check' "
                       "says what can be recovered");
      }
      if (!SameBlock(block, want) || block.offset + kV2BlockHeaderBytes + scratch.size() != end) {
        return BadFile(path, want.offset, fmt::format("block {} does not match its index entry", i),
                       kCorrupt);
      }
      for (const SampleRecord& r : records) fn(r);
      summary.records += records.size();
      ++summary.blocks;
    }
    return summary;
  }
  // No trailer: a crash or a run still writing. Every whole block up to the first bad one.
  uint64_t offset = kHeaderBytes;
  while (offset < opened.size) {
    if (!V2ReadBlock(opened.fd, offset, opened.size, opened.max_block, scratch, records, block,
                     why)) {
      summary.torn_offset = offset;
      summary.partial_bytes = opened.size - offset;
      break;
    }
    for (const SampleRecord& r : records) fn(r);
    summary.records += records.size();
    ++summary.blocks;
    offset += kV2BlockHeaderBytes + scratch.size();
  }
  return summary;
}

}  // namespace

Expected<SamplesFileSummary> ReadSamplesFile(const std::string& path,
                                             const std::function<void(const SampleRecord&)>& fn) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  OpenedSamples opened;
  if (Status s = OpenSamples(path, fd, opened); !s) return s.error();
  if (opened.summary.version == kFormatVersionV2) return ReadV2(path, opened, fn);
  return ReadV1(path, opened, fn);
}

Expected<std::vector<SamplesBlock>> ReadSamplesIndex(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  OpenedSamples opened;
  if (Status s = OpenSamples(path, fd, opened); !s) return s.error();
  if (opened.summary.version != kFormatVersionV2) {
    return UsageError(
        fmt::format("samples file '{}' is version 1, which has no blocks; read it whole with "
                    "'rtpulse samples'",
                    path));
  }
  V2Tail tail;
  std::string why;
  uint64_t where = 0;
  if (!V2ReadTail(opened.fd, opened.size, tail, why, where)) {
    return BadFile(path, where, why, kCorrupt);
  }
  if (tail.present) return tail.blocks;
  std::vector<SamplesBlock> blocks;
  std::vector<std::byte> scratch;
  std::vector<SampleRecord> records;
  SamplesBlock block;
  for (uint64_t offset = kHeaderBytes; offset < opened.size;
       offset += kV2BlockHeaderBytes + scratch.size()) {
    if (!V2ReadBlock(opened.fd, offset, opened.size, opened.max_block, scratch, records, block,
                     why)) {
      break;
    }
    blocks.push_back(block);
  }
  return blocks;
}

Expected<uint64_t> ReadSamplesBlock(const std::string& path, const SamplesBlock& block,
                                    const std::function<void(const SampleRecord&)>& fn) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  OpenedSamples opened;
  if (Status s = OpenSamples(path, fd, opened); !s) return s.error();
  if (opened.summary.version != kFormatVersionV2) {
    return UsageError(fmt::format("samples file '{}' is version 1, which has no blocks", path));
  }
  std::vector<std::byte> scratch;
  std::vector<SampleRecord> records;
  SamplesBlock got;
  std::string why;
  if (!V2ReadBlock(opened.fd, block.offset, opened.size, opened.max_block, scratch, records, got,
                   why)) {
    return BadFile(path, block.offset, why, "read the blocks 'rtpulse samples --check' lists");
  }
  if (!SameBlock(got, block)) {
    return BadFile(path, block.offset, "the block there is not the one asked for",
                   "take the block from ReadSamplesIndex of this file");
  }
  for (const SampleRecord& r : records) fn(r);
  return records.size();
}

Expected<SamplesCheck> CheckSamplesFile(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  OpenedSamples opened;
  if (Status s = OpenSamples(path, fd, opened); !s) return s.error();
  SamplesCheck check;
  check.version = opened.summary.version;
  check.file_bytes = opened.size;
  if (check.version != kFormatVersionV2) {
    SamplesFileSummary& s = opened.summary;
    if (Status located = LocateRecords(path, opened.fd, opened.size, s); !located) {
      check.problem = located.error().message;
      return check;
    }
    check.records = s.records;
    check.has_trailer = s.has_trailer;
    check.torn_offset = kHeaderBytes + s.records * kRecordBytes;
    check.torn_bytes = s.partial_bytes;
    if (!s.has_trailer) check.problem = "no trailer: the run did not finish cleanly";
    if (s.partial_bytes > 0) {
      check.problem = fmt::format("no trailer, and a cut-off last record of {} bytes at byte {}",
                                  s.partial_bytes, check.torn_offset);
    }
    return check;
  }
  V2Tail tail;
  std::string why;
  uint64_t where = 0;
  const bool tail_ok = V2ReadTail(opened.fd, opened.size, tail, why, where);
  check.has_trailer = tail.present;
  check.index_ok = tail_ok && tail.present;
  std::string tail_problem;
  if (!tail_ok) tail_problem = fmt::format("trailer or index at byte {}: {}", where, why);
  std::vector<std::byte> scratch;
  std::vector<SampleRecord> records;
  SamplesBlock block;
  if (check.index_ok) {
    // Every indexed block, the damaged ones counted and skipped.
    for (size_t i = 0; i < tail.blocks.size(); ++i) {
      const uint64_t end =
          i + 1 < tail.blocks.size() ? tail.blocks[i + 1].offset : tail.index_offset;
      const bool ok = V2ReadBlock(opened.fd, tail.blocks[i].offset, end, opened.max_block, scratch,
                                  records, block, why) &&
                      SameBlock(block, tail.blocks[i]) &&
                      block.offset + kV2BlockHeaderBytes + scratch.size() == end;
      if (ok) {
        ++check.blocks_whole;
        check.records += records.size();
        continue;
      }
      if (check.blocks_bad++ == 0) {
        check.torn_offset = tail.blocks[i].offset;
        check.torn_bytes = end - tail.blocks[i].offset;
        check.problem = fmt::format("block {} at byte {} is damaged: {}", i, tail.blocks[i].offset,
                                    why.empty() ? "it does not match its index entry" : why);
      }
    }
    if (check.blocks_bad > 1) {
      check.problem += fmt::format(" ({} damaged blocks in all)", check.blocks_bad);
    }
    return check;
  }
  // No (usable) index: blocks in order up to the first one that does not check.
  const uint64_t end = opened.size;
  uint64_t offset = kHeaderBytes;
  while (offset < end) {
    if (!V2ReadBlock(opened.fd, offset, end, opened.max_block, scratch, records, block, why)) {
      check.blocks_bad = 1;
      check.torn_offset = offset;
      check.torn_bytes = end - offset;
      break;
    }
    ++check.blocks_whole;
    check.records += records.size();
    offset += kV2BlockHeaderBytes + scratch.size();
  }
  if (!tail_problem.empty()) {
    check.problem = tail_problem;
  } else if (check.torn_bytes > 0) {
    check.problem = fmt::format("no trailer; torn tail of {} bytes from byte {}: {}",
                                check.torn_bytes, check.torn_offset, why);
  } else {
    check.problem = "no trailer: the run did not finish cleanly (every block is whole)";
  }
  return check;
}

}  // namespace rtpulse
