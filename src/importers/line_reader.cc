#include "importers/line_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rtpulse::importers {

LineReader::LineReader(int fd, std::string path)
    : fd_(fd), path_(std::move(path)), buffer_(kBufferBytes) {}

LineReader::~LineReader() {
  if (fd_ >= 0) close(fd_);
}

Expected<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return UsageError(fmt::format("{}: cannot open: {}; check the path", path, std::strerror(errno)));
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<LineReader>(new LineReader(fd, path));
}

Expected<bool> LineReader::Next(std::string_view& line) {
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const size_t have = end_ - begin_;
    if (const void* nl = std::memchr(start, '\n', have); nl != nullptr) {
      const size_t len = static_cast<size_t>(static_cast<const char*>(nl) - start);
      line = std::string_view(start, len);
      begin_ += len + 1;
      ++line_number_;
      return true;
    }
    if (eof_) {
      if (have == 0) return false;
      line = std::string_view(start, have);
      begin_ = end_;
      unterminated_ = true;
      ++line_number_;
      return true;
    }
    // Move the partial line to the front and fill the rest of the buffer.
    if (begin_ > 0) {
      std::memmove(buffer_.data(), start, have);
      begin_ = 0;
      end_ = have;
    }
    if (end_ == buffer_.size()) {
      return UsageError(fmt::format("{}:{}:1: line longer than {} bytes; is this a text file?",
                                    path_, line_number_ + 1, buffer_.size()));
    }
    const ssize_t n = read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Failure(fmt::format("{}: read failed: {}", path_, std::strerror(errno)));
    }
    if (n == 0) eof_ = true;
    end_ += static_cast<size_t>(n);
  }
}

}  // namespace rtpulse::importers
