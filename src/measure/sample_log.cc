#include "measure/sample_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include "core/atomic_file.h"
#include "core/clock.h"

namespace rtpulse::measure {

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

// Format constants; docs/samples-format.md has the tables.
constexpr std::string_view kHeaderMagic = "RTPSMPL1";
constexpr std::string_view kTrailerMagic = "RTPSEND1";
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 64;
constexpr size_t kRecordBytes = sizeof(SampleRecord);
constexpr size_t kTrailerBytes = 32;
constexpr uint32_t kClockMonotonic = 1;
constexpr uint32_t kTrailerInterrupted = 1;

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
constexpr size_t kFileBufferBytes = size_t{1} << 20;
static_assert(kFileBufferBytes % kRecordBytes == 0);
// A crash loses at most this much buffered data (plus the writer's 5 ms).
constexpr int64_t kFlushIntervalNs = kNsPerSec;

constexpr auto kWriterPeriod = std::chrono::milliseconds(5);
constexpr size_t kWriterBatchRecords = 4096;  // 128 KiB per Drain/Write round trip
constexpr size_t kReadChunkRecords = 4096;

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

// ---- Binary file sink ----------------------------------------------------------------

class FileSink final : public SampleSink {
 public:
  FileSink(std::string path, std::string tmp_path, int fd)
      : path_(std::move(path)),
        tmp_path_(std::move(tmp_path)),
        fd_(fd),
        buffer_(kFileBufferBytes),
        last_flush_ns_(MonotonicNs()) {}
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  ~FileSink() override {
    if (fd_ < 0) return;
    // Not finished: keep what was recorded, like a crash would, unless there is nothing.
    if (records_ == 0) {
      ::close(fd_);
      ::unlink(tmp_path_.c_str());
      return;
    }
    if (!error_) (void)Flush();
    ::close(fd_);
  }

  Status WriteHeader(const SamplesFileInfo& info) {
    std::byte header[kHeaderBytes] = {};
    std::memcpy(header, kHeaderMagic.data(), kHeaderMagic.size());
    Put<uint32_t>(header, kOffVersion, kFormatVersion);
    Put<uint32_t>(header, kOffHeaderBytes, static_cast<uint32_t>(kHeaderBytes));
    Put<uint32_t>(header, kOffRecordBytes, static_cast<uint32_t>(kRecordBytes));
    Put<uint32_t>(header, kOffClockId, kClockMonotonic);
    Put<int64_t>(header, kOffStartRealtime, info.start_realtime_ns);
    Put<int64_t>(header, kOffStartMonotonic, info.start_monotonic_ns);
    // Unbuffered, so even a run that crashes at once leaves a recognisable file.
    return WriteAll(header, sizeof(header));
  }

  Status Write(const SampleRecord* records, size_t count) override {
    if (error_) return *error_;
    const auto* bytes = reinterpret_cast<const std::byte*>(records);
    size_t left = count * kRecordBytes;
    while (left > 0) {
      const size_t n = std::min(left, buffer_.size() - used_);
      std::memcpy(buffer_.data() + used_, bytes, n);
      used_ += n;
      bytes += n;
      left -= n;
      if (used_ == buffer_.size()) {
        if (Status s = Flush(); !s) return s;
      }
    }
    records_ += count;
    if (used_ > 0 && MonotonicNs() - last_flush_ns_ >= kFlushIntervalNs) return Flush();
    return Status::Ok();
  }

  Status Finish(uint64_t dropped, bool interrupted) override {
    if (fd_ < 0) return Failure(fmt::format("samples file '{}' finished twice", path_));
    if (!error_) AppendTrailer(dropped, interrupted);
    if (!error_) (void)Flush();
    if (!error_ && ::fsync(fd_) != 0) error_ = IoError("cannot flush", errno);
    if (::close(fd_) != 0 && !error_) error_ = IoError("cannot close", errno);
    fd_ = -1;
    if (error_) return *error_;
    if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
      return Failure(
          fmt::format("cannot rename '{}' onto '{}': {} (the complete samples are in '{}')",
                      tmp_path_, path_, ErrnoText(errno), tmp_path_));
    }
    SyncParentFolder();
    return Status::Ok();
  }

 private:
  Error IoError(std::string_view what, int err) const {
    return Failure(
        fmt::format("{} samples file '{}': {} (records written before this stay "
                    "readable in it; free space or choose another folder)",
                    what, tmp_path_, ErrnoText(err)));
  }

  // The buffer holds whole records and is flushed when full, so the trailer always fits.
  void AppendTrailer(uint64_t dropped, bool interrupted) {
    std::byte* t = buffer_.data() + used_;
    std::memset(t, 0, kTrailerBytes);
    std::memcpy(t, kTrailerMagic.data(), kTrailerMagic.size());
    Put<uint64_t>(t, kOffTrailerCount, records_);
    Put<uint64_t>(t, kOffTrailerDropped, dropped);
    Put<uint32_t>(t, kOffTrailerFlags, interrupted ? kTrailerInterrupted : 0);
    used_ += kTrailerBytes;
  }

  Status Flush() {
    Status s = WriteAll(buffer_.data(), used_);
    used_ = 0;
    last_flush_ns_ = MonotonicNs();
    return s;
  }

  Status WriteAll(const std::byte* data, size_t bytes) {
    while (bytes > 0) {
      const ssize_t n = ::write(fd_, data, bytes);
      if (n < 0) {
        if (errno == EINTR) continue;
        error_ = IoError("cannot write", errno);
        return *error_;
      }
      data += n;
      bytes -= static_cast<size_t>(n);
    }
    return Status::Ok();
  }

  // Makes the rename durable. Best effort: some filesystems refuse fsync on a folder, and
  // the data itself is already on disk.
  void SyncParentFolder() const {
    std::filesystem::path dir = std::filesystem::path(path_).parent_path();
    if (dir.empty()) dir = std::filesystem::path(".");
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return;
    (void)::fsync(dfd);
    ::close(dfd);
  }

  std::string path_;
  std::string tmp_path_;
  int fd_;
  std::vector<std::byte> buffer_;
  size_t used_ = 0;
  uint64_t records_ = 0;
  int64_t last_flush_ns_;
  std::optional<Error> error_;  // sticky: after a failed write nothing more is written
};

// ---- cyclictest -v text sink ----------------------------------------------------------

class VerboseSink final : public SampleSink {
 public:
  explicit VerboseSink(std::FILE* out) : out_(out) {}

  Status Write(const SampleRecord* records, size_t count) override {
    for (size_t i = 0; i < count; ++i) {
      const SampleRecord& r = records[i];
      // cyclictest prints the cycle counter and the latency in whole microseconds. Its
      // calcdiff() truncates the nanosecond part of the difference on its own, which can
      // differ from this by 1 us when the two times straddle a second boundary.
      if (std::fprintf(out_, "%8d:%8lu:%8ld\n", static_cast<int>(r.thread),
                       static_cast<unsigned long>(r.seq),
                       static_cast<long>(LatencyNs(r) / kNsPerUs)) < 0) {
        return Failure(fmt::format("cannot write verbose samples: {}", ErrnoText(errno)));
      }
    }
    return Status::Ok();
  }

  Status Finish(uint64_t /*dropped*/, bool /*interrupted*/) override {
    // Plain cyclictest -v has no place for the drop count; the caller reports it.
    if (std::fflush(out_) != 0 || std::ferror(out_) != 0) {
      return Failure(fmt::format("cannot write verbose samples: {}", ErrnoText(errno)));
    }
    return Status::Ok();
  }

 private:
  std::FILE* out_;
};

// Threads inherit their creator's policy: a writer started from a SCHED_FIFO thread would
// compete with the probes it serves. Lowering to SCHED_OTHER never needs a privilege.
void BecomeBackgroundThread() {
  sched_param param{};
  param.sched_priority = 0;
  (void)pthread_setschedparam(pthread_self(), SCHED_OTHER, &param);
  (void)pthread_setname_np(pthread_self(), "rtpulse-samples");
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

// ---- SampleRing -------------------------------------------------------------------------

SampleRing::SampleRing(size_t capacity)
    : slots_([capacity] {
        if (capacity > kMaxCapacity) {
          std::fprintf(stderr, "rtpulse: SampleRing capacity %zu exceeds %zu\n", capacity,
                       kMaxCapacity);
          std::abort();
        }
        return std::bit_ceil(std::max<size_t>(capacity, 1));
      }()),
      mask_(slots_.size() - 1) {
  // The vector's zero-fill already wrote every byte, but that is a library detail (an
  // allocator handing out fresh mmap pages could skip it): write one byte per page so the
  // first Push on each page never takes a page fault in the RT thread.
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  auto* bytes = reinterpret_cast<volatile unsigned char*>(slots_.data());
  const size_t size = slots_.size() * sizeof(SampleRecord);
  for (size_t offset = 0; offset < size; offset += page) bytes[offset] = 0;
}

bool SampleRing::Push(const SampleRecord& record) {
  // Only this thread writes head_, pushed_ and dropped_: plain load + store, no RMW.
  const uint64_t head = head_.load(std::memory_order_relaxed);
  pushed_.store(pushed_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (head - cached_tail_ > mask_) {
    // Acquire pairs with Drain's release: the consumer has finished copying those slots.
    cached_tail_ = tail_.load(std::memory_order_acquire);
    if (head - cached_tail_ > mask_) {
      dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return false;
    }
  }
  slots_[static_cast<size_t>(head & mask_)] = record;
  head_.store(head + 1, std::memory_order_release);  // publishes the slot
  return true;
}

size_t SampleRing::Drain(SampleRecord* out, size_t max) {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  const uint64_t head = head_.load(std::memory_order_acquire);  // pairs with Push's release
  const auto n = static_cast<size_t>(std::min<uint64_t>(head - tail, max));
  if (n == 0) return 0;
  const auto first = static_cast<size_t>(tail & mask_);
  const size_t until_end = std::min(n, capacity() - first);
  std::copy_n(slots_.data() + first, until_end, out);
  std::copy_n(slots_.data(), n - until_end, out + until_end);
  tail_.store(tail + n, std::memory_order_release);  // hands the slots back to the producer
  return n;
}

// ---- Sinks ------------------------------------------------------------------------------

Expected<std::unique_ptr<SampleSink>> OpenSamplesFile(const std::string& path,
                                                      const SamplesFileInfo& info) {
  if (Status s = CheckWritable(path); !s) return s.error();
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Failure(fmt::format("cannot create samples file '{}': {}", tmp, ErrnoText(errno)));
  }
  auto sink = std::make_unique<FileSink>(path, tmp, fd);
  if (Status s = sink->WriteHeader(info); !s) return s.error();  // ~FileSink removes tmp
  return std::unique_ptr<SampleSink>(std::move(sink));
}

std::unique_ptr<SampleSink> MakeVerboseSink(std::FILE* out) {
  return std::make_unique<VerboseSink>(out);
}

// ---- SampleWriter -----------------------------------------------------------------------

SampleWriter::SampleWriter(std::vector<SampleRing*> rings, std::unique_ptr<SampleSink> sink)
    : rings_(std::move(rings)), sink_(std::move(sink)), buffer_(kWriterBatchRecords) {}

SampleWriter::~SampleWriter() {
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    thread_.join();
  }
}

void SampleWriter::Start() {
  if (thread_.joinable() || stopped_) {
    std::fprintf(stderr, "rtpulse: SampleWriter::Start called twice or after Stop\n");
    std::abort();
  }
  thread_ = std::thread([this] { Loop(); });
}

Status SampleWriter::Stop(bool interrupted) {
  if (stopped_) return Failure("samples writer stopped twice");
  stopped_ = true;
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    thread_.join();
  }
  // The thread is gone, so this thread is now the rings' only consumer.
  while (error_.ok() && DrainOnce() > 0) {
  }
  Status finished = sink_->Finish(dropped(), interrupted);
  if (!error_.ok()) return error_;
  return finished;
}

uint64_t SampleWriter::dropped() const {
  uint64_t total = 0;
  for (const SampleRing* ring : rings_) total += ring->dropped();
  return total;
}

void SampleWriter::Loop() {
  BecomeBackgroundThread();
  while (!stop_.load(std::memory_order_acquire)) {
    if (DrainOnce() == 0 && error_.ok()) {
      // Nothing new: still give the sink its chance to flush what it buffers.
      if (Status s = sink_->Write(buffer_.data(), 0); !s) error_ = s;
    }
    if (!error_.ok()) return;  // stop consuming: later records show up as ring drops
    std::this_thread::sleep_for(kWriterPeriod);
  }
}

size_t SampleWriter::DrainOnce() {
  size_t total = 0;
  for (SampleRing* ring : rings_) {
    // At most one ring's worth per pass, so a busy ring cannot starve the others.
    size_t budget = ring->capacity();
    while (budget > 0) {
      const size_t n = ring->Drain(buffer_.data(), std::min(buffer_.size(), budget));
      if (n == 0) break;
      budget -= n;
      total += n;
      if (Status s = sink_->Write(buffer_.data(), n); !s) {
        error_ = s;
        return total;
      }
      written_.fetch_add(n, std::memory_order_relaxed);
    }
  }
  return total;
}

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

}  // namespace rtpulse::measure
