#include "importers/import.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/fs_root.h"
#include "importers/import_internal.h"

namespace rtpulse::importers {
namespace {

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
        StartsWith(line, "Online CPUs") || StartsWith(line, "Thread ") ||
        StartsWith(line, "Using ")) {  // "Using 1 cpus." with -a
      continue;
    }
    if (std::count(line.begin(), line.end(), ':') != 2) return false;
    ++rows;
  }
  return rows > 0;
}

/// What a file's head (its first 64 KiB) is, before any format claims it: each format reads
/// one kind.
enum class Head { kBinary, kJson, kText };

Head HeadKind(std::string_view head) {
  if (head.find('\0') != std::string_view::npos) return Head::kBinary;
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && head[first] == '{') return Head::kJson;
  return Head::kText;
}

/// jitterdebugger's samples.raw: 28-byte records {u32 cpu, i64 sec, i64 nsec, u64 value}.
bool DetectJitterdebuggerRaw(std::string_view head) {
  return head.size() >= 28;
}
bool DetectCyclictestJson(std::string_view head) {
  return head.find("\"file_version\"") != std::string_view::npos ||
         head.find("\"thread\"") != std::string_view::npos;
}
bool DetectJitterdebuggerJson(std::string_view head) {
  return head.find("\"cpu\"") != std::string_view::npos;
}
bool DetectCyclictestHistogram(std::string_view head) {
  return head.find("# Histogram") != std::string_view::npos ||
         head.find("# Total:") != std::string_view::npos;
}
bool DetectRtApp(std::string_view head) {
  return head.find("wu_lat") != std::string_view::npos;
}

using Importer = Expected<Imported> (*)(const std::string& path, const ImportOptions& options,
                                        SampleConsumer* samples);

Expected<Imported> ReadCyclictestJson(const std::string& path, const ImportOptions&,
                                      SampleConsumer*) {
  auto text = internal::ReadSmallFile(path);
  if (!text) return text.error();
  return internal::ImportCyclictestJson(path, *text);
}
Expected<Imported> ReadJitterdebuggerJson(const std::string& path, const ImportOptions&,
                                          SampleConsumer*) {
  auto text = internal::ReadSmallFile(path);
  if (!text) return text.error();
  return internal::ImportJitterdebuggerJson(path, *text);
}
Expected<Imported> ReadCyclictestHistogram(const std::string& path, const ImportOptions&,
                                           SampleConsumer*) {
  return internal::ImportCyclictestHistogram(path);
}
Expected<Imported> ReadCyclictestVerbose(const std::string& path, const ImportOptions&,
                                         SampleConsumer* samples) {
  return internal::ImportCyclictestVerbose(path, samples);
}
Expected<Imported> ReadJitterdebuggerRaw(const std::string& path, const ImportOptions&,
                                         SampleConsumer* samples) {
  return internal::ImportJitterdebuggerRaw(path, samples);
}
Expected<Imported> ReadRtApp(const std::string& path, const ImportOptions&, SampleConsumer*) {
  return internal::ImportRtApp(path);
}

/// One row per import format: adding a format is its importer, a detector and this row.
struct FormatRow {
  Format format;
  const char* name;
  Head head;  ///< the kind of head the format has
  /// Whether a head of that kind is this format. Rows are tried in table order (which matters
  /// only among rows of one kind); `values`, which has no detector, takes the text no row
  /// claims.
  bool (*detect)(std::string_view head);
  Importer import;
  /// The format keeps the samples in the order they were taken (and streams them).
  bool time_ordered;
};
constexpr std::array kFormats = {
    FormatRow{Format::kCyclictestJson, "cyclictest-json", Head::kJson, &DetectCyclictestJson,
              &ReadCyclictestJson, false},
    FormatRow{Format::kCyclictestHistogram, "cyclictest-hist", Head::kText,
              &DetectCyclictestHistogram, &ReadCyclictestHistogram, false},
    FormatRow{Format::kJitterdebuggerJson, "jitterdebugger-json", Head::kJson,
              &DetectJitterdebuggerJson, &ReadJitterdebuggerJson, false},
    FormatRow{Format::kJitterdebuggerRaw, "jitterdebugger-raw", Head::kBinary,
              &DetectJitterdebuggerRaw, &ReadJitterdebuggerRaw, true},
    FormatRow{Format::kRtApp, "rt-app", Head::kText, &DetectRtApp, &ReadRtApp, false},
    // After the histogram and rt-app: their files may hold "N: N: N"-shaped lines too.
    FormatRow{Format::kCyclictestVerbose, "cyclictest-verbose", Head::kText, &LooksVerbose,
              &ReadCyclictestVerbose, true},
    FormatRow{Format::kValues, "values", Head::kText, nullptr, &internal::ImportValues, true},
};

const FormatRow& RowOf(Format format) {
  for (const auto& row : kFormats) {
    if (row.format == format) return row;
  }
  std::abort();  // every Format has its row (tests/importers: FormatTable)
}

}  // namespace

const char* FormatName(Format format) {
  for (const auto& row : kFormats) {
    if (row.format == format) return row.name;
  }
  return "unknown";
}

bool FormatKeepsOrder(Format format) {
  return RowOf(format).time_ordered;
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
  const Head kind = HeadKind(head);
  for (const auto& row : kFormats) {
    if (row.head == kind && row.detect != nullptr && row.detect(head)) return row.format;
  }
  switch (kind) {
    case Head::kBinary:
      return UsageError(fmt::format("{}: binary file of unknown format; {}", path, fix));
    case Head::kJson:
      return UsageError(fmt::format(
          "{}: JSON, but neither cyclictest --json (\"thread\") nor jitterdebugger (\"cpu\"); "
          "{}",
          path, fix));
    case Head::kText:
      break;
  }
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
  const FormatRow& row = RowOf(format);
  Expected<Imported> result = row.import(path, options, samples);
  if (result) {
    result->format = format;
    result->time_ordered = row.time_ordered;
    // No other tool records the skipped periods' latencies (most do not count skipped
    // periods at all): per-period statistics are unknown, not equal to the per-wake-up ones.
    for (auto& p : result->probes) p.per_period_unknown = true;
  }
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

namespace {

/// The smallest population variance the file allows. With every unknown value >= `limit`
/// (overflows) or <= `neg_max` (wrapped negatives), the true variance is
/// V(c) = (1/N)[sum_known n (x-c)^2 + over*max(limit-c,0)^2 + neg*max(c-neg_max,0)^2] at c =
/// the true mean, or more; so the minimum of V over any interval holding the true mean is a
/// lower bound. V is convex: ternary search. Values are shifted by `pivot` for precision.
double SmallestVariance(const std::vector<std::pair<int64_t, uint64_t>>& known, uint64_t over,
                        int64_t limit_ns, uint64_t neg, int64_t neg_max_ns, double lo, double hi) {
  const double pivot = (lo + hi) / 2;
  long double n = 0, sx = 0, sxx = 0;
  for (const auto& [v, c] : known) {
    const long double x = static_cast<long double>(v) - static_cast<long double>(pivot);
    n += c;
    sx += c * x;
    sxx += c * x * x;
  }
  n += static_cast<long double>(over + neg);
  const long double limit = static_cast<long double>(limit_ns) - static_cast<long double>(pivot);
  const long double neg_max =
      static_cast<long double>(neg_max_ns) - static_cast<long double>(pivot);
  auto v = [&](long double c) {
    long double total = sxx - 2 * c * sx + c * c * (n - over - neg);
    if (over > 0 && limit > c) total += over * (limit - c) * (limit - c);
    if (neg > 0 && c > neg_max) total += neg * (c - neg_max) * (c - neg_max);
    return total / n;
  };
  long double a = static_cast<long double>(lo - pivot);
  long double b = static_cast<long double>(hi - pivot);
  for (int i = 0; i < 200 && b - a > 1e-6L; ++i) {
    const long double m1 = a + (b - a) / 3;
    const long double m2 = b - (b - a) / 3;
    if (v(m1) <= v(m2)) {
      b = m2;
    } else {
      a = m1;
    }
  }
  return static_cast<double>(std::max<long double>(0, v((a + b) / 2)));
}

}  // namespace

void RecordTool(results::ProbeResult& probe, const ToolThread& t) {
  using results::Bound;
  Histogram& h = probe.histogram;
  std::vector<std::pair<int64_t, uint64_t>> known;
  for (size_t us = 0; us < t.counts.size(); ++us) {
    if (t.counts[us] != 0) known.emplace_back(static_cast<int64_t>(us) * 1000, t.counts[us]);
  }
  const int64_t limit_ns = t.limit_us * 1000;
  uint64_t unknown_over = t.overflows;
  const bool max_known = t.overflows == 0 || (t.overflow_max_ns && *t.overflow_max_ns >= limit_ns);
  if (t.overflows > 0 && max_known) {
    known.emplace_back(*t.overflow_max_ns, 1);  // the tool's max is one of them
    --unknown_over;
  }
  uint64_t unknown_neg = t.negatives;
  if (t.negatives == 1) {
    known.emplace_back(t.negative_max_ns, 1);  // the only negative is the largest one
    unknown_neg = 0;
  }
  for (const auto& [v, c] : known) h.RecordN(v, c);
  if (unknown_over > 0) h.RecordN(limit_ns, unknown_over);
  if (unknown_neg > 0) h.RecordN(t.negative_max_ns, unknown_neg);
  if (t.unknown_sign > 0) h.RecordN(t.negative_max_ns, t.unknown_sign);
  if (h.count() == 0) return;

  results::StatBounds& b = probe.bounds;
  const bool all_known = unknown_over == 0 && unknown_neg == 0 && t.unknown_sign == 0;
  double mean = h.Mean();
  double stddev = h.StdDev();
  if (all_known) {
    // Every value is known: the histogram's moments are exact. The tool's own exact mean
    // is kept (it is the number the tool printed); a truncated one is not needed.
    if (t.mean_ns && t.mean_bound == Bound::kExact) mean = *t.mean_ns;
  } else {
    double lo = static_cast<double>(h.min());
    double hi = static_cast<double>(h.max());
    if (t.mean_ns) {
      mean = *t.mean_ns;
      b.mean = t.mean_bound;
      if (t.mean_bound != Bound::kExact) b.reasons.push_back(t.mean_reason);
      // The true mean is within the tool's printing: 0.01 us, or whole us truncated.
      lo = mean - 5;
      hi = t.mean_bound == Bound::kExact ? mean + 5 : mean + 1000;
    } else {
      b.mean = unknown_over > 0 && unknown_neg > 0 ? Bound::kUnknown
               : unknown_over > 0                  ? Bound::kLowerBound
                                                   : Bound::kUpperBound;
    }
    stddev = std::sqrt(
        SmallestVariance(known, unknown_over, limit_ns, unknown_neg, t.negative_max_ns, lo, hi));
    b.stddev = Bound::kLowerBound;
  }
  if (unknown_over > 0) {
    b.percentiles_lower_from_ns = limit_ns;
    if (!max_known) b.max = Bound::kLowerBound;
    if (known.empty() && unknown_neg == 0) b.min = Bound::kLowerBound;
    b.reasons.push_back(fmt::format(
        "{}: {} of {} samples were histogram overflows (>= {} us) whose values the file does not "
        "give: the jitter is a lower bound (the smallest spread those values allow){}{}",
        t.where, t.overflows, h.count(), t.limit_us,
        max_known ? "" : ", the max is a lower bound (the limit)",
        t.mean_ns || unknown_neg > 0 ? "" : ", the mean is a lower bound"));
  }
  if (unknown_neg > 0) {
    b.min = Bound::kUpperBound;
    b.percentiles_upper_to_ns = -1;  // every other value is a class >= 0
    b.reasons.push_back(fmt::format(
        "{}: {} samples were negative (cyclictest's unsigned wrap) and the file gives only the "
        "largest, {} us: they are counted there, so the min and the lowest percentiles are upper "
        "bounds{}",
        t.where, t.negatives, t.negative_max_ns / 1000,
        t.mean_ns ? ""
                  : (unknown_over > 0 ? ", the mean is unknown" : ", the mean is an upper bound")));
  }
  if (t.unknown_sign > 0) {
    // Each may be a negative (<= the largest negative) or an overflow (>= the limit).
    b.min = Bound::kUpperBound;
    b.max = b.mean = b.stddev = Bound::kUnknown;
    b.percentiles_unknown = true;
    b.reasons.push_back(fmt::format(
        "{}: {} samples outside the histogram are each either negative (cyclictest's unsigned "
        "wrap, <= {} us) or >= {} us, and the file does not say which: they are counted at {} "
        "us; the min is an upper bound, the max, mean, jitter and percentiles are unknown",
        t.where, t.unknown_sign, t.negative_max_ns / 1000, t.limit_us, t.negative_max_ns / 1000));
  }
  h.RestoreMoments(h.min(), h.max(),
                   static_cast<int64_t>(std::llround(mean * static_cast<double>(h.count()))),
                   stddev);
  probe.periods_elapsed = h.count();
  results::LinearHistogram linear;
  linear.limit_us = t.limit_us;
  linear.counts = t.counts;
  linear.counts.resize(static_cast<size_t>(t.limit_us), 0);
  linear.overflows = t.overflows;  // cyclictest counts a wrapped negative as one too
  linear.underflows = t.negatives;
  probe.linear = std::move(linear);
}

Expected<std::string> ReadSmallFile(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text) {
    return UsageError(
        fmt::format("{}: cannot open: {}; check the path", path, std::strerror(errno)));
  }
  return std::move(*text);
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
