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
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/cpus.h"
#include "core/file_owner.h"

namespace rtpulse::measure {

namespace {

// Format constants; docs/samples-format.md has the tables.
using samples_format::kHeaderBytes;
using samples_format::kTrailerBytes;
constexpr size_t kRecordBytes = sizeof(SampleRecord);

constexpr size_t kFileBufferBytes = size_t{1} << 20;
static_assert(kFileBufferBytes % kRecordBytes == 0);
// A crash loses at most this much buffered data (plus the writer's 5 ms).
constexpr int64_t kFlushIntervalNs = kNsPerSec;

constexpr auto kWriterPeriod = std::chrono::milliseconds(5);
constexpr size_t kWriterBatchRecords = 4096;  // 128 KiB per Drain/Write round trip
constexpr size_t kReadChunkRecords = 4096;

std::string ErrnoText(int err) {
  return std::strerror(err);
}

// ---- Binary file sink ----------------------------------------------------------------

/// The records WriteLatencies() stands for, `count` of them from `first_seq`.
void FillLatencyRecords(const int64_t* latency_ns, size_t count, uint64_t first_seq,
                        SampleRecord* out) {
  for (size_t i = 0; i < count; ++i) {
    out[i] = SampleRecord{first_seq + i, 0, latency_ns[i], 0, 0xFFFF, 0, 0, 0};
  }
}

class FileSink final : public SampleSink {
 public:
  FileSink(std::string path, std::string tmp_path, int fd, SamplesFormat format)
      : path_(std::move(path)),
        tmp_path_(std::move(tmp_path)),
        fd_(fd),
        format_(format),
        buffer_(format == SamplesFormat::kV1 ? kFileBufferBytes : 0),
        last_flush_ns_(MonotonicNs()) {
    if (format_ == SamplesFormat::kV2) {
      pending_.reserve(samples_format::kV2MaxBlockRecords);
      encoded_.reserve(kFileBufferBytes + kFileBufferBytes / 4);
    }
  }
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
    std::byte header[kHeaderBytes];
    if (format_ == SamplesFormat::kV2) {
      samples_format::EncodeHeaderV2(info, header);
    } else {
      samples_format::EncodeHeader(info, header);
    }
    file_offset_ = kHeaderBytes;
    // Unbuffered, so even a run that crashes at once leaves a recognisable file.
    return WriteAll(header, sizeof(header));
  }

  Status Write(const SampleRecord* records, size_t count) override {
    if (error_) return *error_;
    if (format_ == SamplesFormat::kV2) return WriteV2(records, count);
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

  Status WriteLatencies(const int64_t* latency_ns, size_t count, uint64_t first_seq) override {
    if (error_) return *error_;
    if (format_ != SamplesFormat::kV2) {
      return SampleSink::WriteLatencies(latency_ns, count, first_seq);
    }
    // Whole blocks straight from the latencies while no block is being gathered; the rest
    // gathers as records: the same blocks, the same bytes as Write() would give.
    constexpr size_t kBlock = samples_format::kV2MaxBlockRecords;
    while (count > 0) {
      if (pending_.empty() && count >= kBlock) {
        const size_t before = encoded_.size();
        samples_format::AppendLatencyBlockV2(latency_ns, kBlock, first_seq, encoded_);
        NoteBlock(before, first_seq, 0, kBlock);
        latency_ns += kBlock;
        first_seq += kBlock;
        count -= kBlock;
        records_ += kBlock;
      } else {
        const size_t n = std::min(count, kBlock - pending_.size());
        const size_t before = pending_.size();
        pending_.resize(before + n);
        FillLatencyRecords(latency_ns, n, first_seq, pending_.data() + before);
        latency_ns += n;
        first_seq += n;
        count -= n;
        records_ += n;
        if (pending_.size() == kBlock) EncodePending();
      }
      if (encoded_.size() >= kFileBufferBytes) {
        if (Status s = Flush(); !s) return s;
      }
    }
    return WriteV2(nullptr, 0);  // the flush at least once a second
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
    // Missing privilege and a full disk are exit 3, like every other write (core/file_owner.h).
    return Error{WriteError(what, tmp_path_, err).code,
                 fmt::format("{} samples file '{}': {} (records written before this stay "
                             "readable in it; free space or choose another folder)",
                             what, tmp_path_, ErrnoText(err))};
  }

  // The buffer holds whole records and is flushed when full, so the trailer always fits.
  void AppendTrailer(uint64_t dropped, bool interrupted) {
    if (format_ == SamplesFormat::kV2) {
      EncodePending();
      samples_format::AppendIndexAndTrailerV2(blocks_, records_, dropped, interrupted, file_offset_,
                                              encoded_);
      return;
    }
    samples_format::EncodeTrailer(records_, dropped, interrupted, buffer_.data() + used_);
    used_ += kTrailerBytes;
  }

  Status Flush() {
    if (format_ == SamplesFormat::kV2) {
      EncodePending();
      Status s = WriteAll(encoded_.data(), encoded_.size());
      encoded_.clear();
      last_flush_ns_ = MonotonicNs();
      return s;
    }
    Status s = WriteAll(buffer_.data(), used_);
    used_ = 0;
    last_flush_ns_ = MonotonicNs();
    return s;
  }

  // Version 2: records gather into a block; a full block is encoded (here, in the writer
  // thread), encoded blocks are written once 1 MiB is buffered or a second has passed.
  Status WriteV2(const SampleRecord* records, size_t count) {
    // Whole blocks straight from the caller's records (import's large batches): no copy
    // through pending_.
    constexpr size_t kBlock = samples_format::kV2MaxBlockRecords;
    while (pending_.empty() && count >= kBlock) {
      EncodeBlock(records, kBlock);
      records += kBlock;
      count -= kBlock;
      records_ += kBlock;
      if (encoded_.size() >= kFileBufferBytes) {
        if (Status s = Flush(); !s) return s;
      }
    }
    while (count > 0) {
      const size_t n =
          std::min(count, size_t{samples_format::kV2MaxBlockRecords} - pending_.size());
      pending_.insert(pending_.end(), records, records + n);
      records += n;
      count -= n;
      records_ += n;
      if (pending_.size() == samples_format::kV2MaxBlockRecords) EncodePending();
      if (encoded_.size() >= kFileBufferBytes) {
        if (Status s = Flush(); !s) return s;
      }
    }
    if ((!pending_.empty() || !encoded_.empty()) &&
        MonotonicNs() - last_flush_ns_ >= kFlushIntervalNs) {
      return Flush();
    }
    return Status::Ok();
  }

  // Encodes the gathered records as one block and notes it for the index.
  void EncodePending() {
    if (pending_.empty()) return;
    EncodeBlock(pending_.data(), pending_.size());
    pending_.clear();
  }

  void EncodeBlock(const SampleRecord* records, size_t count) {
    const size_t before = encoded_.size();
    samples_format::AppendBlockV2(records, count, encoded_);
    NoteBlock(before, records[0].seq, records[0].expected_ns, count);
  }

  // The block just appended to encoded_ at `before`, for the index.
  void NoteBlock(size_t before, uint64_t first_seq, int64_t first_expected_ns, size_t count) {
    blocks_.push_back(
        SamplesBlock{file_offset_, first_seq, first_expected_ns, static_cast<uint32_t>(count)});
    file_offset_ += encoded_.size() - before;
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
  SamplesFormat format_;
  std::vector<std::byte> buffer_;  // version 1
  size_t used_ = 0;
  std::vector<SampleRecord> pending_;  // version 2: the block being gathered
  std::vector<std::byte> encoded_;     // version 2: encoded blocks not yet written
  std::vector<SamplesBlock> blocks_;   // version 2: the index
  uint64_t file_offset_ = 0;           // version 2: file offset of the next encoded byte
  uint64_t records_ = 0;
  int64_t last_flush_ns_;
  std::optional<Error> error_;  // sticky: after a failed write nothing more is written
};

// ---- background sink ---------------------------------------------------------------------

class BackgroundSink final : public SampleSink {
 public:
  BackgroundSink(std::unique_ptr<SampleSink> inner, size_t depth)
      : inner_(std::move(inner)), depth_(std::max<size_t>(depth, 1)), thread_([this] { Loop(); }) {}
  BackgroundSink(const BackgroundSink&) = delete;
  BackgroundSink& operator=(const BackgroundSink&) = delete;
  ~BackgroundSink() override { Stop(); }

  Status Write(const SampleRecord* records, size_t count) override {
    if (Status s = QueueLatencies(); !s) return s;  // keeps the order
    Batch batch;
    if (Status s = TakeSpare(batch); !s) return s;
    batch.records.assign(records, records + count);
    Queue(std::move(batch));
    return Status::Ok();
  }

  /// Gathers the latencies (8 bytes a sample, not a 32-byte record) into batches of
  /// kLatencyBatch; the thread behind encodes them.
  Status WriteLatencies(const int64_t* latency_ns, size_t count, uint64_t first_seq) override {
    if (!open_.latencies.empty() && first_seq != open_.first_seq + open_.latencies.size()) {
      if (Status s = QueueLatencies(); !s) return s;
    }
    while (count > 0) {
      if (open_.latencies.empty()) {
        open_.first_seq = first_seq;
        open_.latencies.reserve(kLatencyBatch);
      }
      const size_t n = std::min(count, kLatencyBatch - open_.latencies.size());
      open_.latencies.insert(open_.latencies.end(), latency_ns, latency_ns + n);
      latency_ns += n;
      first_seq += n;
      count -= n;
      if (open_.latencies.size() == kLatencyBatch) {
        if (Status s = QueueLatencies(); !s) return s;
      }
    }
    return Status::Ok();
  }

  Status Finish(uint64_t dropped, bool interrupted) override {
    (void)QueueLatencies();  // an error stays in error_
    Stop();
    if (error_) return *error_;
    return inner_->Finish(dropped, interrupted);
  }

 private:
  // 512 KiB of latencies: 16 whole blocks of the file format.
  static constexpr size_t kLatencyBatch = size_t{16} * samples_format::kV2MaxBlockRecords;

  // Records (from Write) or latencies (from WriteLatencies), in the order they came.
  struct Batch {
    std::vector<SampleRecord> records;
    std::vector<int64_t> latencies;
    uint64_t first_seq = 0;
  };

  // Waits until the queue has room, then gives `batch` a spare (emptied) buffer pair; the
  // thread's error instead once it failed.
  Status TakeSpare(Batch& batch) {
    std::unique_lock<std::mutex> lock(mu_);
    space_.wait(lock, [this] { return queue_.size() < depth_ || error_; });
    if (error_) return *error_;
    if (!spare_.empty()) {
      batch = std::move(spare_.back());
      spare_.pop_back();
    }
    batch.records.clear();
    batch.latencies.clear();
    return Status::Ok();
  }

  void Queue(Batch batch) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(batch));
    ready_.notify_one();
  }

  // Hands the gathered latencies to the thread, swapping in a spare buffer.
  Status QueueLatencies() {
    if (open_.latencies.empty()) return Status::Ok();
    Batch next;
    if (Status s = TakeSpare(next); !s) return s;
    std::swap(next, open_);
    Queue(std::move(next));
    return Status::Ok();
  }

  void Loop() {
    for (;;) {
      Batch batch;
      bool failed = false;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [this] { return !queue_.empty() || closing_; });
        if (queue_.empty()) return;
        batch = std::move(queue_.front());
        queue_.pop_front();
        failed = error_.has_value();
      }
      // After an error nothing more is written (the file stops at the last good batch).
      Status s = Status::Ok();
      if (!failed) {
        s = batch.latencies.empty()
                ? inner_->Write(batch.records.data(), batch.records.size())
                : inner_->WriteLatencies(batch.latencies.data(), batch.latencies.size(),
                                         batch.first_seq);
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (!s && !error_) error_ = s.error();
      spare_.push_back(std::move(batch));
      space_.notify_all();
    }
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
      ready_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }

  std::unique_ptr<SampleSink> inner_;
  size_t depth_;
  Batch open_;  // latencies being gathered (the producer's own)
  std::mutex mu_;
  std::condition_variable ready_;  // a batch is queued, or closing
  std::condition_variable space_;  // a batch was taken, or an error
  std::deque<Batch> queue_;
  std::vector<Batch> spare_;  // buffers to reuse
  std::optional<Error> error_;
  bool closing_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

// ---- cyclictest -v text sink ----------------------------------------------------------

class VerboseSink final : public SampleSink {
 public:
  VerboseSink(std::FILE* out, int64_t reduction) : out_(out), reduction_(reduction) {}

  Status Write(const SampleRecord* records, size_t count) override {
    for (size_t i = 0; i < count; ++i) {
      const SampleRecord& r = records[i];
      // cyclictest prints the cycle counter and the latency in whole microseconds. Its
      // calcdiff() truncates the nanosecond part of the difference on its own, which can
      // differ from this by 1 us when the two times straddle a second boundary.
      uint64_t cycle = r.seq;
      long latency_us = static_cast<long>(LatencyNs(r) / kNsPerUs);
      if (reduction_ > 1) {
        // -o: the thread's largest latency of every `reduction_` samples, at its cycle; the
        // maximum starts from 0 for each group, as cyclictest's.
        if (reduced_.size() <= r.thread) reduced_.resize(r.thread + size_t{1});
        Reduced& g = reduced_[r.thread];
        if (latency_us > g.max_us) {
          g.max_us = latency_us;
          g.cycle = r.seq;
        }
        if (++g.samples < reduction_) continue;
        cycle = g.cycle;
        latency_us = g.max_us;
        // A group with no latency above 0 repeats the last one's cycle, as cyclictest's.
        g.samples = 0;
        g.max_us = 0;
      }
      if (std::fprintf(out_, "%8d:%8lu:%8ld\n", static_cast<int>(r.thread),
                       static_cast<unsigned long>(cycle), latency_us) < 0) {
        return Failure(fmt::format("cannot write verbose samples: {}", ErrnoText(errno)));
      }
    }
    return Status::Ok();
  }

  Status Finish(uint64_t /*dropped*/, bool /*interrupted*/) override {
    // Plain cyclictest -v has no place for the drop count; the caller reports it. With -o, a
    // thread's last group short of `reduction_` samples is not printed, as in cyclictest.
    if (std::fflush(out_) != 0 || std::ferror(out_) != 0) {
      return Failure(fmt::format("cannot write verbose samples: {}", ErrnoText(errno)));
    }
    return Status::Ok();
  }

 private:
  struct Reduced {
    int64_t samples = 0;
    long max_us = 0;
    uint64_t cycle = 0;
  };
  std::FILE* out_;
  int64_t reduction_;
  std::vector<Reduced> reduced_;  ///< -o: per thread, the group being reduced.
};

// Threads inherit their creator's policy: a writer started from a SCHED_FIFO thread would
// compete with the probes it serves. Lowering to SCHED_OTHER never needs a privilege.
void BecomeBackgroundThread(const std::vector<int>& measured_cpus) {
  (void)LeaveMeasuredCpus(measured_cpus);  // SCHED_OTHER even when started from an RT thread
  (void)pthread_setname_np(pthread_self(), "rtpulse-samples");
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
                                                      const SamplesFileInfo& info,
                                                      SamplesFormat format) {
  if (Status s = CheckWritable(path); !s) return s.error();
  // The log is renamed into place when complete and read again for the exact percentiles:
  // a device or FIFO cannot be either (a rename as root would replace /dev/null itself).
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return UsageError(fmt::format(
        "samples file '{}' is not a regular file: give a file path (the log is read again "
        "after the run); leave --samples out to keep no log",
        path));
  }
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  // The header is in the file before the file has a name: a run killed between open() and
  // the header's write() (the signal storm test hit it) would otherwise leave an empty
  // FILE.tmp.<pid> that no reader can tell from a foreign file. O_TMPFILE keeps the file
  // nameless until the linkat() below; a filesystem without it gets the named file at once.
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  const bool unnamed = fd >= 0;
  if (!unnamed) fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return WriteError("cannot create samples file", tmp, errno);
  HandOver(fd);
  auto sink = std::make_unique<FileSink>(path, tmp, fd, format);
  if (Status s = sink->WriteHeader(info); !s) return s.error();  // ~FileSink removes tmp
  if (unnamed) {
    ::unlink(tmp.c_str());  // a stale one of an earlier process with this pid (O_TRUNC's job)
    const std::string self = fmt::format("/proc/self/fd/{}", fd);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      return WriteError("cannot create samples file", tmp, errno);
    }
  }
  return std::unique_ptr<SampleSink>(std::move(sink));
}

Status SampleSink::WriteLatencies(const int64_t* latency_ns, size_t count, uint64_t first_seq) {
  std::vector<SampleRecord> records(std::min<size_t>(count, 4096));
  for (size_t done = 0; done < count;) {
    const size_t n = std::min(count - done, records.size());
    FillLatencyRecords(latency_ns + done, n, first_seq + done, records.data());
    if (Status s = Write(records.data(), n); !s) return s;
    done += n;
  }
  return Status::Ok();
}

std::unique_ptr<SampleSink> MakeBackgroundSink(std::unique_ptr<SampleSink> inner, size_t depth) {
  return std::make_unique<BackgroundSink>(std::move(inner), depth);
}

std::unique_ptr<SampleSink> MakeVerboseSink(std::FILE* out, int64_t reduction) {
  return std::make_unique<VerboseSink>(out, reduction);
}

// ---- SampleWriter -----------------------------------------------------------------------

SampleWriter::SampleWriter(std::vector<SampleRing*> rings, std::unique_ptr<SampleSink> sink,
                           std::vector<int> measured_cpus)
    : rings_(std::move(rings)),
      sink_(std::move(sink)),
      measured_cpus_(std::move(measured_cpus)),
      buffer_(kWriterBatchRecords) {}

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
  BecomeBackgroundThread(measured_cpus_);
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

Expected<std::unique_ptr<SampleSink>> OpenSampleSink(const std::string& samples_path, bool verbose,
                                                     int64_t oscope) {
  if (!samples_path.empty()) {
    SamplesFileInfo info;
    info.start_realtime_ns = ClockNs(CLOCK_REALTIME);
    info.start_monotonic_ns = MonotonicNs();
    return OpenSamplesFile(samples_path, info);
  }
  if (verbose) return MakeVerboseSink(stdout, oscope);
  return std::unique_ptr<SampleSink>();
}

}  // namespace rtpulse::measure
