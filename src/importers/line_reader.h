#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace rtpulse::importers {

/// Reads a file front to back through one fixed buffer (1 MiB reads), handing out runs of
/// whole lines or whole fixed-size records, so files of any size are read in constant
/// memory. Every importer that streams a file reads it through this class.
class ChunkReader {
 public:
  static constexpr size_t kBufferBytes = size_t{1} << 20;
  /// Bytes that may be read past the end of a run (word-at-a-time parsers): always there.
  static constexpr size_t kReadAhead = 8;

  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  /// Opens `path` for sequential reading of bytes [begin, end) (default: the whole file),
  /// or a usage error naming it.
  static Expected<std::unique_ptr<ChunkReader>> Open(const std::string& path, uint64_t begin = 0,
                                                     uint64_t end = UINT64_MAX);

  /// The next run of whole lines, valid until the next call. Every run ends with '\n': an
  /// unterminated last line gets one added (see last_line_unterminated()), so parsers can
  /// use the '\n' as a sentinel. Empty at the end of the file. A line longer than the
  /// buffer is a usage error naming `next_line`, the caller's 1-based number of the first
  /// line not yet returned.
  Expected<std::string_view> NextLines(uint64_t next_line);
  /// The next run of whole `record_bytes` records, valid until the next call; empty at the
  /// end. Bytes left over at the end that do not fill a record: stray_bytes().
  Expected<std::string_view> NextRecords(size_t record_bytes);
  /// Starts again from the first byte of the range (a usage error on a pipe).
  Status Rewind();

  /// File offset of the first byte of the run returned last (at the end: of the stray
  /// bytes, i.e. the length of the whole records).
  uint64_t offset() const { return offset_; }
  /// True once the file's last line was returned without its own '\n'.
  bool last_line_unterminated() const { return unterminated_; }
  /// Trailing bytes NextRecords() could not return as a whole record.
  size_t stray_bytes() const { return stray_; }
  /// True for a pipe, FIFO, socket or character device: read once, in order, no Rewind().
  bool is_pipe() const { return pipe_; }

 private:
  ChunkReader(int fd, std::string path, uint64_t begin, uint64_t end);
  /// Moves the bytes after the last returned run to the front and reads more after them.
  /// Returns false at end of file.
  Expected<bool> Fill();

  int fd_;
  std::string path_;
  uint64_t begin_;            // first byte of the range read
  uint64_t limit_;            // end of the range read
  std::vector<char> buffer_;  // kBufferBytes + 1 + kReadAhead: the added '\n', read-ahead
  size_t end_ = 0;            // valid bytes in buffer_
  size_t returned_ = 0;       // bytes at the front handed out by the last call
  uint64_t offset_ = 0;       // file offset of buffer_[0]
  bool eof_ = false;
  bool pipe_ = false;  // not seekable (pipe, FIFO): read() in order, no Rewind()
  bool unterminated_ = false;
  size_t stray_ = 0;
};

/// Reads a text file line by line (through a ChunkReader). Lines are views into the
/// buffer, valid until the next call; a trailing '\r' is kept (callers treat it as white
/// space).
class LineReader {
 public:
  /// Opens `path`, or a usage error naming it.
  static Expected<std::unique_ptr<LineReader>> Open(const std::string& path);

  /// Next line without its '\n'; false at the end. A line longer than the buffer is an error.
  Expected<bool> Next(std::string_view& line);
  /// 1-based number of the line Next() returned last.
  uint64_t line_number() const { return line_number_; }
  /// True when the last line returned had no terminating '\n' (cut off at end of file).
  bool last_line_unterminated() const {
    return chunks_->last_line_unterminated() && pos_ == run_.size();
  }

 private:
  explicit LineReader(std::unique_ptr<ChunkReader> chunks) : chunks_(std::move(chunks)) {}
  std::unique_ptr<ChunkReader> chunks_;
  std::string_view run_;
  size_t pos_ = 0;
  uint64_t line_number_ = 0;
};

}  // namespace rtpulse::importers
