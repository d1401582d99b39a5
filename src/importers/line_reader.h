#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace rtpulse::importers {

/// Reads a text file line by line through one fixed buffer (1 MiB reads), so files of any
/// size are read in constant memory. Lines are views into the buffer, valid until the next
/// call; a trailing '\r' is kept (callers treat it as white space).
class LineReader {
 public:
  static constexpr size_t kBufferBytes = size_t{1} << 20;

  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// Opens `path`, or a usage error naming it.
  static Expected<std::unique_ptr<LineReader>> Open(const std::string& path);

  /// Next line without its '\n'; false at the end. A line longer than the buffer is an error.
  Expected<bool> Next(std::string_view& line);
  /// 1-based number of the line Next() returned last.
  uint64_t line_number() const { return line_number_; }
  /// True when the last line returned had no terminating '\n' (cut off at end of file).
  bool last_line_unterminated() const { return unterminated_; }

 private:
  LineReader(int fd, std::string path);
  int fd_;
  std::string path_;
  std::vector<char> buffer_;
  size_t begin_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  bool unterminated_ = false;
  uint64_t line_number_ = 0;
};

}  // namespace rtpulse::importers
