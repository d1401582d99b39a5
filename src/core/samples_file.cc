#include "core/samples_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
  if (summary.version != kFormatVersion) {
    return BadFile(path, kOffVersion,
                   fmt::format("format version {} is not supported (this rtpulse reads {})",
                               summary.version, kFormatVersion),
                   "read it with the rtpulse version that wrote it");
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

}  // namespace samples_format

// ---- Reader -----------------------------------------------------------------------------

Expected<SamplesFileSummary> ReadSamplesFile(const std::string& path,
                                             const std::function<void(const SampleRecord&)>& fn) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
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
    if (Status s = CheckMagic(path, header); !s) return s.error();
  }
  if (size < kHeaderBytes) {
    return BadFile(
        path, size,
        fmt::format("the file ends after {} bytes, inside the {}-byte header", size, kHeaderBytes),
        magic_ok ? "its writer stopped before any sample was stored; there is nothing to read"
                 : kNotOurs);
  }

  SamplesFileSummary summary;
  if (Status s = CheckHeader(path, header, summary); !s) return s.error();
  if (Status s = LocateRecords(path, fd.get(), size, summary); !s) return s.error();

  std::vector<SampleRecord> chunk(kReadChunkRecords);
  uint64_t offset = kHeaderBytes;
  for (uint64_t left = summary.records; left > 0;) {
    const auto n = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
    if (!ReadAt(fd.get(), reinterpret_cast<std::byte*>(chunk.data()), n * kRecordBytes, offset)) {
      return ReadError(path, offset);
    }
    for (size_t i = 0; i < n; ++i) fn(chunk[i]);
    left -= n;
    offset += n * kRecordBytes;
  }
  return summary;
}

}  // namespace rtpulse
