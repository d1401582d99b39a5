// One value per line: the fast path. Streams the file through a ChunkReader (one 1 MiB
// buffer), parses plain decimals with integer arithmetic only, and keeps nothing but the
// histogram (and what the sample consumer streams out), so memory stays flat whatever the
// line count.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <system_error>
#include <thread>
#include <vector>

#include "importers/import_internal.h"
#include "importers/line_reader.h"
#include "importers/number.h"

namespace rtpulse::importers::internal {
namespace {

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

/// Value of eight decimal digits held one per byte (0..9, the most significant digit in
/// the lowest byte, as a little-endian load lays out text): pairs, then quads, then all.
inline uint64_t EightDigits(uint64_t v) {
  v = v * 10 + (v >> 8);  // even bytes: 10 * d[i] + d[i+1]
  constexpr uint64_t kPairs = 0x000000FF000000FFULL;
  return ((v & kPairs) * (100 + (1000000ULL << 32)) +
          ((v >> 16) & kPairs) * (1 + (10000ULL << 32))) >>
         32;
}

/// Masks for a short line of `len` bytes before its '\n' with the point at `dot`
/// (dot == len: no point).
struct ShortLineShape {
  uint64_t digits = 0;     // the digit bytes
  uint64_t below_dot = 0;  // bytes before the point
  uint8_t shift = 0;       // bits that move the last digit to the top byte
  uint8_t frac_digits = 0;
};

constexpr std::array<std::array<ShortLineShape, 8>, 8> MakeShortLineShapes() {
  std::array<std::array<ShortLineShape, 8>, 8> t{};
  for (size_t len = 1; len < 8; ++len) {
    for (size_t dot = 1; dot <= len; ++dot) {
      ShortLineShape& s = t[len][dot];
      const uint64_t line = (uint64_t{1} << (8 * len)) - 1;
      s.digits = dot < len ? line & ~(uint64_t{0xFF} << (8 * dot)) : line;
      s.below_dot = (uint64_t{1} << (8 * dot)) - 1;
      s.shift = static_cast<uint8_t>(8 * (8 - (dot < len ? len - 1 : len)));
      s.frac_digits = static_cast<uint8_t>(dot < len ? len - dot - 1 : 0);
    }
  }
  return t;
}
constexpr auto kShortLineShapes = MakeShortLineShapes();

/// Word-at-a-time parse of a short line "digits[.digits]\n" (at most 8 bytes with its
/// '\n'; ChunkReader guarantees 8 readable bytes at any line start). On success `number`
/// holds all the digits as one integer and `frac_digits` how many of them follow the
/// point ("20.125" = 20125 and 3), and the result is the bytes before the '\n'. 0 when the
/// line is longer, blank, or holds anything else: the caller then goes byte by byte.
inline size_t ParseShortLine(const char* p, uint64_t& number, size_t& frac_digits) {
  if constexpr (std::endian::native != std::endian::little) {
    return 0;
  } else {
    constexpr uint64_t kOnes = 0x0101010101010101ULL;
    constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL;
    constexpr uint64_t kHighNibbles = 0xF0F0F0F0F0F0F0F0ULL;
    constexpr uint64_t kZeros = kOnes * '0';
    uint64_t w = 0;
    std::memcpy(&w, p, sizeof w);
    // Non-zero bytes where w is not '0'..'9' (high nibble 3, and still 3 after adding 6; a
    // carry out of a byte >= 0xFA can only mark the next byte too), then their top bits.
    const uint64_t odd =
        ((w & kHighNibbles) ^ kZeros) | (((w + kOnes * 6) & kHighNibbles) ^ kZeros);
    const uint64_t stops = (((odd & kLow7) + kLow7) | odd) & ~kLow7;
    if (stops == 0) return 0;
    const auto first = static_cast<size_t>(__builtin_ctzll(stops)) / 8;
    size_t len = first;
    if (p[first] == '.') {
      const uint64_t rest = stops & (stops - 1);
      if (rest == 0) return 0;
      len = static_cast<size_t>(__builtin_ctzll(rest)) / 8;
    }
    if (first == 0 || p[len] != '\n') return 0;
    const ShortLineShape& shape = kShortLineShapes[len][first];
    const uint64_t digits = (w ^ kZeros) & shape.digits;  // 0..9 per byte
    const uint64_t packed = (digits & shape.below_dot) | ((digits >> 8) & ~shape.below_dot);
    number = EightDigits(packed << shape.shift);
    frac_digits = shape.frac_digits;
    return len;
  }
}

/// Digits after the point in a short line: at most 6 (7 bytes, one of them the point).
constexpr size_t kShortFractionDigits = 6;

/// Values (ns) counted in a direct table: 0 .. 1.05 ms, 4 MiB. Their order does not matter to
/// the histogram, and the table is where exact percentiles come from.
constexpr size_t kSmallValues = size_t{1} << 20;
/// With a samples log, the values outside the table (negative, or 1.05 ms and more) are kept
/// as well, up to this many (8 MiB), so the percentiles are exact without reading the log
/// back; beyond it the caller reads the log.
constexpr size_t kMaxExactOutside = size_t{1} << 20;

class ValuesParser {
 public:
  ValuesParser(const std::string& path, int64_t unit_ns, SampleConsumer* samples,
               results::ProbeResult& probe)
      : path_(path), unit_ns_(unit_ns), samples_(samples), probe_(probe) {
    const auto unit = static_cast<uint64_t>(unit_ns);
    uint64_t scale = 1;
    for (size_t d = 0; d <= kShortFractionDigits; ++d, scale *= 10) {
      scale_[d] = scale;
      exact_[d] = unit % scale == 0 ? unit / scale : 0;
    }
    // mmap, not calloc: glibc may serve a later calloc from the heap and zero it, which
    // would make all 4 MiB resident; fresh anonymous pages stay unmapped until touched.
    void* table = mmap(nullptr, kSmallValues * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (table != MAP_FAILED) {
      small_.reset(static_cast<uint32_t*>(table));
      small_limit_ = kSmallValues;
    }
    keeps_all_ = samples != nullptr;
  }

  /// With a samples log: the values at the nearest ranks of `percentiles` (ascending),
  /// exactly, from the table and the values kept beside it; nothing when they were not all
  /// kept (more than kMaxExactOutside outside the table, or a table folded early). Call
  /// before Finish(), which empties the table.
  std::optional<std::vector<int64_t>> ExactPercentiles(std::span<const double> percentiles) {
    FlushEmitted();
    if (!keeps_all_ || emitted_ == 0) return std::nullopt;
    std::sort(outside_.begin(), outside_.end());
    std::vector<uint64_t> ranks;
    for (double p : percentiles) ranks.push_back(Histogram::NearestRank(p, emitted_));
    std::vector<int64_t> values;
    uint64_t seen = 0;
    const auto visit = [&](int64_t value, uint64_t count) {
      seen += count;
      while (values.size() < ranks.size() && ranks[values.size()] <= seen) values.push_back(value);
    };
    const auto zero = std::lower_bound(outside_.begin(), outside_.end(), int64_t{0});
    for (auto it = outside_.begin(); it != zero; ++it) visit(*it, 1);
    for (size_t v = 0; v < small_limit_ && values.size() < ranks.size(); ++v) {
      if (small_[v] != 0) visit(static_cast<int64_t>(v), small_[v]);
    }
    for (auto it = zero; it != outside_.end(); ++it) visit(*it, 1);
    if (values.size() != ranks.size()) return std::nullopt;
    return values;
  }

  /// Lines completed so far.
  uint64_t lines() const { return line_; }

  /// Puts everything still held back into the histogram; call after the last Parse().
  void Finish() {
    if (samples_ != nullptr) FlushEmitted();
    FoldSmall();
    Flush();
  }

  /// Parses a run of whole lines; `run` ends with '\n', which stops every digit loop.
  /// Plain "digits[.digits]\n" lines take the fast path here; anything else (blanks,
  /// comments, signs, exponents, long numbers, errors) goes through ParseLine().
  Status Parse(std::string_view run) {
    const char* p = run.data();
    const char* const end = p + run.size();
    const auto unit = static_cast<uint64_t>(unit_ns_);
    // A run holds at most run.size() lines, so no small count can wrap within it.
    if (small_total_ > UINT32_MAX - run.size()) {
      FoldSmall();
      keeps_all_ = false;  // the table no longer holds every value (beyond 4e9 lines)
    }
    small_total_ += static_cast<uint32_t>(run.size());
    // Locals, not members: stores into small[] could otherwise alias them.
    uint32_t* const small = small_.get();
    const uint64_t small_limit = small_limit_;
    SampleConsumer* const samples = samples_;
    uint64_t lines = line_;
    while (p < end) {
      const char* const line_start = p;
      uint64_t number = 0;
      size_t digits_after_point = 0;
      if (const size_t len = ParseShortLine(p, number, digits_after_point); len != 0) {
        // At most 7 digits: number * unit_ns < 1e16 for any unit up to seconds (larger
        // units, possible through the API only, take the careful path).
        const uint64_t exact = exact_[digits_after_point];
        if (unit <= 1'000'000'000) {
          const uint64_t scale = scale_[digits_after_point];
          const uint64_t value = exact != 0 ? number * exact : (number * unit + scale / 2) / scale;
          ++lines;
          p += len + 1;
          if (value < small_limit) {
            ++small[value];
            if (samples != nullptr) Emit(static_cast<int64_t>(value));
          } else {
            Add(static_cast<int64_t>(value));
          }
          continue;
        }
      }
      // Longer lines: the shared number parser, straight on when only the '\n' follows;
      // anything else (blanks, comments, errors) goes through ParseLine().
      size_t i = static_cast<size_t>(line_start - run.data());
      int64_t ns = 0;
      if (ParseScaledNs(run, i, unit_ns_, ns) == NumberError::kNone && run[i] == '\n') {
        ++lines;
        Add(ns);
        p = run.data() + i + 1;
        continue;
      }
      line_ = lines;
      auto next = ParseLine(run, static_cast<size_t>(line_start - run.data()));
      if (!next) return next.error();
      lines = line_;
      p = run.data() + *next;
    }
    line_ = lines;
    return Status::Ok();
  }

 private:
  /// The histogram does not need the order, so values below kSmallValues are only counted
  /// (one increment each) and folded into it at the end with RecordN, which gives the same
  /// buckets, extremes and exact sums; the rest is batched. The samples log, when there is
  /// one, gets every value in order as it is read.
  void Add(int64_t ns) {
    if (static_cast<uint64_t>(ns) < small_limit_) {  // Parse() keeps small_total_
      ++small_[static_cast<size_t>(ns)];
    } else {
      pending_[pending_count_++] = ns;
      if (pending_count_ == pending_.size()) Flush();
      if (keeps_all_) {
        if (outside_.size() < kMaxExactOutside) {
          outside_.push_back(ns);
        } else {
          keeps_all_ = false;
          outside_ = {};
        }
      }
    }
    if (samples_ != nullptr) Emit(ns);
  }
  /// Hands the samples log its values a batch at a time.
  void Emit(int64_t ns) {
    emit_[emit_count_++] = ns;
    if (emit_count_ == emit_.size()) FlushEmitted();
  }
  void FlushEmitted() {
    if (emit_count_ == 0) return;
    samples_->AddLatencies(emit_.data(), emit_count_, emitted_);
    emitted_ += emit_count_;
    emit_count_ = 0;
  }
  void Flush() {
    probe_.histogram.RecordMany(pending_.data(), pending_count_);
    pending_count_ = 0;
  }
  void FoldSmall() {
    if (small_total_ == 0) return;
    for (size_t v = 0; v < small_limit_; ++v) {
      if (small_[v] != 0) {
        probe_.histogram.RecordN(static_cast<int64_t>(v), small_[v]);
        small_[v] = 0;
      }
    }
    small_total_ = 0;
  }

  /// Parses the one line starting at run[i]; returns the offset just past its '\n'.
  Expected<size_t> ParseLine(std::string_view run, size_t i) {
    const size_t line_start = i;
    ++line_;
    while (IsBlank(run[i])) ++i;
    if (run[i] == '\n') return i + 1;
    if (run[i] == '#') {
      return static_cast<size_t>(
                 static_cast<const char*>(std::memchr(run.data() + i, '\n', run.size() - i)) -
                 run.data()) +
             1;
    }
    int64_t ns = 0;
    const size_t number_start = i;
    const NumberError e = ParseScaledNs(run, i, unit_ns_, ns);
    if (e != NumberError::kNone) {
      const size_t col = number_start - line_start + 1;
      if (e == NumberError::kTooLarge) {
        return At(path_, line_, col, "value out of range", "values must fit in 292 years of ns");
      }
      return At(path_, line_, col, fmt::format("'{}' is not a number", Token(run, number_start)),
                "write one decimal value per line ('#' starts a comment)");
    }
    while (IsBlank(run[i])) ++i;
    if (run[i] != '\n') {
      return At(path_, line_, i - line_start + 1,
                fmt::format("unexpected '{}' after the value", Token(run, i)),
                "one value per line: more than one column? cut it first (e.g. cut -d, -f2)");
    }
    Add(ns);
    return i + 1;
  }

  static std::string Token(std::string_view run, size_t at) {
    size_t end = at;
    while (end < run.size() && end - at < 20 && run[end] != '\n' && !IsBlank(run[end])) {
      ++end;
    }
    return std::string(run.substr(at, std::max<size_t>(end - at, 1)));
  }

  const std::string& path_;
  int64_t unit_ns_;
  SampleConsumer* samples_;
  results::ProbeResult& probe_;
  std::array<uint64_t, kShortFractionDigits + 1> scale_{};
  std::array<uint64_t, kShortFractionDigits + 1> exact_{};  // unit / 10^d when exact, else 0
  uint64_t line_ = 0;
  std::array<int64_t, 256> pending_{};  // values not yet in the histogram (no samples_)
  size_t pending_count_ = 0;
  // Counts of each value in [0, kSmallValues) ns, not yet in the histogram (no samples_).
  struct Unmap {
    void operator()(uint32_t* p) const { munmap(p, kSmallValues * sizeof(uint32_t)); }
  };
  std::unique_ptr<uint32_t[], Unmap> small_;
  uint64_t small_limit_ = 0;          // kSmallValues once small_ is allocated
  uint32_t small_total_ = 0;          // bound on the counts added since the last fold
  std::array<int64_t, 4096> emit_{};  // values not yet passed to samples_
  size_t emit_count_ = 0;
  uint64_t emitted_ = 0;          // values passed to samples_ (their seq)
  bool keeps_all_ = false;        // every value is in small_ or outside_ (with samples_ only)
  std::vector<int64_t> outside_;  // the values not in small_, while keeps_all_
};

/// Ranges per thread start after a '\n' found within this many bytes of the split point.
constexpr size_t kSplitSearchBytes = size_t{64} << 10;

/// Parses bytes [begin, end) of `path` into `probe`'s histogram (and `samples`, in order);
/// with `samples`, `exact` receives the exact results::kSummaryPercentiles when the parse
/// could keep them. Returns the lines read.
Expected<uint64_t> ParseRange(const std::string& path, uint64_t begin, uint64_t end,
                              int64_t unit_ns, SampleConsumer* samples, results::ProbeResult& probe,
                              std::optional<results::ExactPercentileValues>* exact = nullptr) {
  auto reader = ChunkReader::Open(path, begin, end);
  if (!reader) return reader.error();
  ValuesParser parser(path, unit_ns, samples, probe);
  for (;;) {
    auto run = (*reader)->NextLines(parser.lines() + 1);
    if (!run) return run.error();
    if (run->empty()) {
      if (exact != nullptr) {
        if (const auto v = parser.ExactPercentiles(results::kSummaryPercentiles)) {
          *exact = results::SummaryPercentileValues(*v);
        }
      }
      parser.Finish();
      return parser.lines();
    }
    if (Status s = parser.Parse(*run); !s) return s.error();
  }
}

/// Splits a large regular file at line starts and parses the pieces on `threads` threads
/// into one histogram each, then merges them (exact: counts, extremes and sums add up the
/// same in any order). Nothing when the file is small, not splittable, or any piece has an
/// error: the caller then reads it on one thread, which names the first bad line exactly.
std::optional<results::ProbeResult> ParseInParallel(const std::string& path, int64_t unit_ns,
                                                    int threads, uint64_t min_bytes,
                                                    int* used_threads) {
  if (threads == 0) {
    // The CPUs this process may run on (taskset, cpusets), not all of the machine's.
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    const int cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
    threads = std::clamp(cpus, 1, 4);
  }
  struct stat st {};
  if (threads < 2 || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) < min_bytes) {
    return std::nullopt;
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::vector<uint64_t> bounds{0};
  std::vector<char> probe_bytes(kSplitSearchBytes);
  for (int k = 1; k < threads; ++k) {
    const uint64_t at =
        std::max(bounds.back(), size / static_cast<uint64_t>(threads) * static_cast<uint64_t>(k));
    const ssize_t got = pread(fd, probe_bytes.data(), probe_bytes.size(), static_cast<off_t>(at));
    const void* nl =
        got > 0 ? std::memchr(probe_bytes.data(), '\n', static_cast<size_t>(got)) : nullptr;
    if (nl == nullptr) break;
    bounds.push_back(at + static_cast<uint64_t>(static_cast<const char*>(nl) - probe_bytes.data()) +
                     1);
  }
  close(fd);
  bounds.push_back(size);
  const size_t pieces = bounds.size() - 1;
  if (pieces < 2) return std::nullopt;

  std::vector<results::ProbeResult> parts;
  for (size_t i = 0; i < pieces; ++i) parts.push_back(NewProbe(0, -1));
  std::vector<char> ok(pieces, 0);
  // A piece that fails for any reason (bad line, no memory, no thread) sends the whole file
  // to the one-thread path, which reports it properly.
  const auto parse = [&](size_t i) {
    try {
      ok[i] = ParseRange(path, bounds[i], bounds[i + 1], unit_ns, nullptr, parts[i]) ? 1 : 0;
    } catch (const std::exception&) {
      ok[i] = 0;
    }
  };
  {
    std::vector<std::jthread> workers;
    for (size_t i = 1; i < pieces; ++i) {
      try {
        workers.emplace_back(parse, i);
      } catch (const std::system_error&) {
        break;  // ok[i] stays 0
      }
    }
    parse(0);
  }
  for (size_t i = 0; i < pieces; ++i) {
    if (ok[i] == 0) return std::nullopt;
  }
  for (size_t i = 1; i < pieces; ++i) parts[0].histogram.Merge(parts[i].histogram);
  if (parts[0].histogram.count() == 0) return std::nullopt;
  *used_threads = static_cast<int>(pieces);
  return std::move(parts[0]);
}

/// A latency or response time below zero is a sign or column mix-up more often than data.
std::string NegativeValuesWarning(const Histogram& h, int64_t unit_ns) {
  const char* unit = unit_ns == 1               ? "ns"
                     : unit_ns == 1'000         ? "us"
                     : unit_ns == 1'000'000     ? "ms"
                     : unit_ns == 1'000'000'000 ? "s"
                                                : nullptr;
  const std::string smallest =
      unit != nullptr
          ? fmt::format("{} {}", static_cast<double>(h.min()) / static_cast<double>(unit_ns), unit)
          : fmt::format("{} ns", h.min());
  return fmt::format(
      "{} negative value{} of {} (the smallest {}): latencies and response times are not "
      "negative; check the sign and that the column holds latencies (they are kept as read)",
      h.negative_count(), h.negative_count() == 1 ? "" : "s", h.count(), smallest);
}

}  // namespace

Expected<Imported> ImportValues(const std::string& path, const ImportOptions& options,
                                SampleConsumer* samples) {
  const int64_t unit_ns = options.unit_ns;
  Imported out;
  out.format = Format::kValues;
  std::optional<results::ProbeResult> merged;
  if (samples == nullptr) {
    merged = ParseInParallel(path, unit_ns, options.threads, options.parallel_min_bytes,
                             &out.parse_threads);
  }
  if (merged) {
    out.probes.push_back(std::move(*merged));
  } else {
    out.probes.push_back(NewProbe(0, -1));
    auto lines = ParseRange(path, 0, UINT64_MAX, unit_ns, samples, out.probes.front(),
                            &out.exact_percentiles);
    if (!lines) return lines.error();
    if (out.probes.front().histogram.count() == 0) {
      return At(path, *lines + 1, 1, "no values in the file",
                "give a file with one number per line (blank lines and '#' comments are skipped)");
    }
  }
  const Histogram& h = out.probes.front().histogram;
  if (h.negative_count() > 0) out.warnings.push_back(NegativeValuesWarning(h, unit_ns));
  out.probes.front().periods_elapsed = out.probes.front().histogram.count();
  out.samples_streamed = samples != nullptr ? out.probes.front().histogram.count() : 0;
  return out;
}

}  // namespace rtpulse::importers::internal
