// One value per line: the fast path. Streams the file through one 1 MiB buffer, parses
// decimals without strtod, and keeps nothing but the histogram (and what the sample consumer
// streams out), so memory stays flat whatever the line count.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "importers/import_internal.h"
#include "importers/number.h"

namespace rtpulse::importers::internal {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

struct ValuesParser {
  const std::string& path;
  int64_t unit_ns;
  SampleConsumer* samples;
  results::ProbeResult& probe;
  uint64_t line = 0;  // lines completed before the current chunk

  /// Parses whole lines in `chunk` (every line ends with '\n', except at end of file).
  Status Parse(std::string_view chunk) {
    size_t i = 0;
    const size_t n = chunk.size();
    while (i < n) {
      const size_t line_start = i;
      ++line;
      while (i < n && IsBlank(chunk[i])) ++i;
      if (i == n || chunk[i] == '\n') {
        ++i;
        continue;
      }
      if (chunk[i] == '#') {
        const void* nl = std::memchr(chunk.data() + i, '\n', n - i);
        i = nl == nullptr ? n : static_cast<size_t>(static_cast<const char*>(nl) - chunk.data()) + 1;
        continue;
      }
      int64_t ns = 0;
      const size_t number_start = i;
      const NumberError e = ParseScaledNs(chunk, i, unit_ns, ns);
      if (e != NumberError::kNone) {
        const size_t col = number_start - line_start + 1;
        if (e == NumberError::kTooLarge) {
          return At(path, line, col, "value out of range", "values must fit in 292 years of ns");
        }
        return At(path, line, col,
                  fmt::format("'{}' is not a number", Token(chunk, number_start)),
                  "write one decimal value per line ('#' starts a comment)");
      }
      while (i < n && IsBlank(chunk[i])) ++i;
      if (i < n && chunk[i] != '\n') {
        return At(path, line, i - line_start + 1,
                  fmt::format("unexpected '{}' after the value", Token(chunk, i)),
                  "one value per line: more than one column? cut it first (e.g. cut -d, -f2)");
      }
      ++i;
      probe.histogram.Record(ns);
      if (samples != nullptr) {
        samples->Add(TimedSample{0, 0xFFFF, probe.histogram.count() - 1, 0, ns});
      }
    }
    return Status::Ok();
  }

  static std::string Token(std::string_view chunk, size_t at) {
    size_t end = at;
    while (end < chunk.size() && end - at < 20 && chunk[end] != '\n' && !IsBlank(chunk[end])) {
      ++end;
    }
    return std::string(chunk.substr(at, std::max<size_t>(end - at, 1)));
  }
};

}  // namespace

Expected<Imported> ImportValues(const std::string& path, int64_t unit_ns,
                                SampleConsumer* samples) {
  Imported out;
  out.format = Format::kValues;
  out.time_ordered = true;
  out.probes.push_back(NewProbe(0, -1));
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return UsageError(fmt::format("{}: cannot open: {}; check the path", path, std::strerror(errno)));
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> buffer(kBufferBytes);
  ValuesParser parser{path, unit_ns, samples, out.probes.front()};
  size_t kept = 0;  // bytes of an unfinished line carried over
  for (;;) {
    const ssize_t got = read(fd, buffer.data() + kept, buffer.size() - kept);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(fd);
      return Failure(fmt::format("{}: read failed: {}", path, std::strerror(err)));
    }
    const size_t have = kept + static_cast<size_t>(got);
    if (got == 0) {
      Status s = parser.Parse(std::string_view(buffer.data(), have));
      close(fd);
      if (!s) return s.error();
      break;
    }
    const void* last_nl = memrchr(buffer.data(), '\n', have);
    if (last_nl == nullptr) {
      if (have == buffer.size()) {
        close(fd);
        return At(path, parser.line + 1, 1, "line longer than 1 MiB", "is this a text file?");
      }
      kept = have;
      continue;
    }
    const size_t whole = static_cast<size_t>(static_cast<const char*>(last_nl) - buffer.data()) + 1;
    if (Status s = parser.Parse(std::string_view(buffer.data(), whole)); !s) {
      close(fd);
      return s.error();
    }
    kept = have - whole;
    std::memmove(buffer.data(), buffer.data() + whole, kept);
  }
  if (out.probes.front().histogram.count() == 0) {
    return At(path, parser.line + 1, 1, "no values in the file",
              "give a file with one number per line (blank lines and '#' comments are skipped)");
  }
  out.probes.front().periods_elapsed = out.probes.front().histogram.count();
  out.samples_streamed = samples != nullptr ? out.probes.front().histogram.count() : 0;
  return out;
}

}  // namespace rtpulse::importers::internal
