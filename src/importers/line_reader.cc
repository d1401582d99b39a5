#include "importers/line_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rtpulse::importers {

ChunkReader::ChunkReader(int fd, std::string path, uint64_t begin, uint64_t end)
    : fd_(fd),
      path_(std::move(path)),
      begin_(begin),
      limit_(end),
      buffer_(kBufferBytes + 1 + kReadAhead),
      offset_(begin) {}

ChunkReader::~ChunkReader() {
  if (fd_ >= 0) close(fd_);
}

Expected<std::unique_ptr<ChunkReader>> ChunkReader::Open(const std::string& path, uint64_t begin,
                                                         uint64_t end) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return UsageError(
        fmt::format("{}: cannot open: {}; check the path", path, std::strerror(errno)));
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::unique_ptr<ChunkReader> reader(new ChunkReader(fd, path, begin, end));
  struct stat st {};
  if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    if (begin != 0) {
      return UsageError(fmt::format("{}: is a pipe and cannot be read from byte {}", path, begin));
    }
    reader->pipe_ = true;
  }
  return reader;
}

Expected<bool> ChunkReader::Fill() {
  if (returned_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + returned_, end_ - returned_);
    end_ -= returned_;
    offset_ += returned_;
    returned_ = 0;
  }
  while (!eof_) {
    const uint64_t at = offset_ + end_;
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(kBufferBytes - end_, limit_ > at ? limit_ - at : 0));
    const ssize_t got = want == 0 ? 0
                        : pipe_   ? read(fd_, buffer_.data() + end_, want)
                                  : pread(fd_, buffer_.data() + end_, want, static_cast<off_t>(at));
    if (got < 0) {
      if (errno == EINTR) continue;
      return Failure(fmt::format("{}: read failed: {}", path_, std::strerror(errno)));
    }
    if (got == 0) {
      eof_ = true;
      break;
    }
    end_ += static_cast<size_t>(got);
    return true;
  }
  return false;
}

Expected<std::string_view> ChunkReader::NextLines(uint64_t next_line) {
  for (;;) {
    auto more = Fill();
    if (!more) return more.error();
    if (!*more) {
      if (end_ == 0) return std::string_view();
      buffer_[end_] = '\n';
      unterminated_ = true;
      returned_ = end_;
      return std::string_view(buffer_.data(), end_ + 1);
    }
    if (const void* nl = memrchr(buffer_.data(), '\n', end_); nl != nullptr) {
      returned_ = static_cast<size_t>(static_cast<const char*>(nl) - buffer_.data()) + 1;
      return std::string_view(buffer_.data(), returned_);
    }
    if (end_ == kBufferBytes) {
      return UsageError(fmt::format("{}:{}:1: line longer than {} bytes; is this a text file?",
                                    path_, next_line, kBufferBytes));
    }
  }
}

Expected<std::string_view> ChunkReader::NextRecords(size_t record_bytes) {
  for (;;) {
    auto more = Fill();
    if (!more) return more.error();
    if (!*more) {
      stray_ = end_;
      return std::string_view();
    }
    if (end_ >= record_bytes) {
      returned_ = end_ / record_bytes * record_bytes;
      return std::string_view(buffer_.data(), returned_);
    }
  }
}

Status ChunkReader::Rewind() {
  if (pipe_) {
    return UsageError(fmt::format(
        "{}: is a pipe, and this format is read twice; save it to a file first", path_));
  }
  end_ = returned_ = stray_ = 0;
  offset_ = begin_;
  eof_ = unterminated_ = false;
  return Status::Ok();
}

Expected<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path) {
  auto chunks = ChunkReader::Open(path);
  if (!chunks) return chunks.error();
  return std::unique_ptr<LineReader>(new LineReader(std::move(*chunks)));
}

Expected<bool> LineReader::Next(std::string_view& line) {
  if (pos_ == run_.size()) {
    auto run = chunks_->NextLines(line_number_ + 1);
    if (!run) return run.error();
    if (run->empty()) return false;
    run_ = *run;
    pos_ = 0;
  }
  // Every run ends with '\n', so this always finds one.
  const auto* nl =
      static_cast<const char*>(std::memchr(run_.data() + pos_, '\n', run_.size() - pos_));
  const size_t end = static_cast<size_t>(nl - run_.data());
  line = run_.substr(pos_, end - pos_);
  pos_ = end + 1;
  ++line_number_;
  return true;
}

}  // namespace rtpulse::importers
