#include "importers/import.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "importers/import_internal.h"

namespace rtpulse::importers {
namespace {

struct FormatRow {
  Format format;
  const char* name;
};
constexpr std::array kFormats = {
    FormatRow{Format::kCyclictestJson, "cyclictest-json"},
    FormatRow{Format::kCyclictestHistogram, "cyclictest-hist"},
    FormatRow{Format::kCyclictestVerbose, "cyclictest-verbose"},
    FormatRow{Format::kJitterdebuggerJson, "jitterdebugger-json"},
    FormatRow{Format::kJitterdebuggerRaw, "jitterdebugger-raw"},
    FormatRow{Format::kRtApp, "rt-app"},
    FormatRow{Format::kValues, "values"},
};

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

/// True when every non-comment line of `head` (the last one may be cut) is "N: N: N".
bool LooksVerbose(std::string_view head) {
  size_t rows = 0;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) break;  // cut line: ignore
    std::string_view line = head.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty() || line[0] == '#' || StartsWith(line, "Max CPUs") ||
        StartsWith(line, "Online CPUs") || StartsWith(line, "Thread ")) {
      continue;
    }
    if (std::count(line.begin(), line.end(), ':') != 2) return false;
    ++rows;
  }
  return rows > 0;
}

}  // namespace

const char* FormatName(Format format) {
  for (const auto& row : kFormats) {
    if (row.format == format) return row.name;
  }
  return "unknown";
}

std::optional<Format> FormatFromName(const std::string& name) {
  for (const auto& row : kFormats) {
    if (name == row.name) return row.format;
  }
  return std::nullopt;
}

std::vector<std::string> FormatNames() {
  std::vector<std::string> names;
  for (const auto& row : kFormats) names.emplace_back(row.name);
  return names;
}

Expected<Format> DetectFormat(const std::string& path) {
  // stat() before open(): opening a FIFO that has no writer yet would block.
  struct stat st {};
  const bool known = stat(path.c_str(), &st) == 0;
  if (known && S_ISDIR(st.st_mode)) {
    return UsageError(fmt::format("{}: is a folder; give a file", path));
  }
  if (known && !S_ISREG(st.st_mode)) {
    // Reading the head of a pipe would take it away from the import itself.
    return UsageError(
        fmt::format("{}: not a regular file (a pipe?), so its format cannot be "
                    "detected without consuming it; name it with --format ({})",
                    path, fmt::join(FormatNames(), ", ")));
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return UsageError(
        fmt::format("{}: cannot open: {}; check the path", path, std::strerror(errno)));
  }
  std::string head(64 * 1024, '\0');
  const ssize_t got = read(fd, head.data(), head.size());
  close(fd);
  if (got < 0) return Failure(fmt::format("{}: read failed: {}", path, std::strerror(errno)));
  head.resize(static_cast<size_t>(got));
  const std::string fix = fmt::format("name it with --format ({})", fmt::join(FormatNames(), ", "));
  if (head.empty()) return internal::At(path, 1, 1, "empty file", "nothing to import");
  if (head.find('\0') != std::string::npos) {
    // jitterdebugger's samples.raw: 28-byte records {u32 cpu, i64 sec, i64 nsec, u64 value}.
    if (head.size() >= 28) return Format::kJitterdebuggerRaw;
    return UsageError(fmt::format("{}: binary file of unknown format; {}", path, fix));
  }
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && head[first] == '{') {
    if (head.find("\"file_version\"") != std::string::npos ||
        head.find("\"thread\"") != std::string::npos) {
      return Format::kCyclictestJson;
    }
    if (head.find("\"cpu\"") != std::string::npos) return Format::kJitterdebuggerJson;
    return UsageError(fmt::format(
        "{}: JSON, but neither cyclictest --json (\"thread\") nor jitterdebugger (\"cpu\"); {}",
        path, fix));
  }
  if (head.find("# Histogram") != std::string::npos || head.find("# Total:") != std::string::npos) {
    return Format::kCyclictestHistogram;
  }
  if (head.find("wu_lat") != std::string::npos) return Format::kRtApp;
  if (LooksVerbose(head)) return Format::kCyclictestVerbose;
  return Format::kValues;
}

Expected<Imported> ImportFile(const std::string& path, const ImportOptions& options,
                              SampleConsumer* samples) {
  Format format;
  if (options.format) {
    format = *options.format;
  } else {
    auto detected = DetectFormat(path);
    if (!detected) return detected.error();
    format = *detected;
  }
  Expected<Imported> result = UsageError("unreachable");
  switch (format) {
    case Format::kCyclictestJson:
    case Format::kJitterdebuggerJson: {
      auto text = internal::ReadSmallFile(path);
      if (!text) return text.error();
      result = format == Format::kCyclictestJson ? internal::ImportCyclictestJson(path, *text)
                                                 : internal::ImportJitterdebuggerJson(path, *text);
      break;
    }
    case Format::kCyclictestHistogram:
      result = internal::ImportCyclictestHistogram(path);
      break;
    case Format::kCyclictestVerbose:
      result = internal::ImportCyclictestVerbose(path, samples);
      break;
    case Format::kJitterdebuggerRaw:
      result = internal::ImportJitterdebuggerRaw(path, samples);
      break;
    case Format::kRtApp:
      result = internal::ImportRtApp(path);
      break;
    case Format::kValues:
      result = internal::ImportValues(path, options.unit_ns, samples, options.threads);
      break;
  }
  if (result) result->format = format;
  return result;
}

namespace internal {

results::ProbeResult NewProbe(int index, int cpu) {
  results::ProbeResult p;
  p.index = index;
  p.cpu = cpu;
  p.wake = "import";
  return p;
}

void RecordLinear(results::ProbeResult& probe, const std::vector<uint64_t>& counts,
                  int64_t limit_us, uint64_t overflows, int64_t min_ns, int64_t max_ns,
                  double mean_ns) {
  Histogram& h = probe.histogram;
  for (size_t us = 0; us < counts.size(); ++us) {
    if (counts[us] != 0) h.RecordN(static_cast<int64_t>(us) * 1000, counts[us]);
  }
  if (overflows > 0) {
    // Overflows are >= the limit; only the largest is known exactly (the tool's max).
    const int64_t limit_ns = limit_us * 1000;
    if (max_ns >= limit_ns) {
      h.RecordN(limit_ns, overflows - 1);
      h.RecordN(max_ns, 1);
    } else {
      h.RecordN(limit_ns, overflows);
    }
  }
  if (h.count() == 0) return;
  const double stddev = h.StdDev();
  const int64_t lo = std::min(min_ns, h.min());
  const int64_t hi = std::max(max_ns, h.max());
  h.RestoreMoments(
      lo, hi, static_cast<int64_t>(std::llround(mean_ns * static_cast<double>(h.count()))), stddev);
  probe.periods_elapsed = h.count();
  results::LinearHistogram linear;
  linear.limit_us = limit_us;
  linear.counts = counts;
  linear.counts.resize(static_cast<size_t>(limit_us), 0);
  linear.overflows = overflows;
  probe.linear = std::move(linear);
}

Expected<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return UsageError(
        fmt::format("{}: cannot open: {}; check the path", path, std::strerror(errno)));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::pair<std::string_view, size_t>> Fields(std::string_view line) {
  std::vector<std::pair<std::string_view, size_t>> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.emplace_back(line.substr(start, i - start), start);
  }
  return out;
}

std::pair<uint64_t, uint64_t> LineCol(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  uint64_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, offset - line_start + 1};
}

}  // namespace internal
}  // namespace rtpulse::importers
