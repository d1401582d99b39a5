// cyclictest's three outputs: --json, the -h/-H text block, and -v sample lines.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <regex>

#include "importers/import_internal.h"
#include "importers/line_reader.h"
#include "importers/number.h"

namespace rtpulse::importers::internal {
namespace {

using nlohmann::json;

/// A usage error at the first place `needle` occurs in `text` (JSON has no positions after
/// parsing; the key names the place well enough).
Error JsonAt(const std::string& path, const std::string& text, const std::string& needle,
             std::string_view what, std::string_view fix) {
  const size_t at = text.find(needle);
  const auto [line, col] = LineCol(text, at == std::string::npos ? 0 : at);
  return At(path, line, col, what, fix);
}

}  // namespace

/// Parses JSON text, or a "file:line:col" error from the parser's byte offset.
Expected<json> ParseJson(const std::string& path, const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return At(path, 1, 1, "empty file", "nothing to import");
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    const size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    const auto [line, col] = LineCol(text, offset);
    std::string what = e.what();
    if (const size_t p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
    return At(path, line, col, what, "the file is cut short or not JSON; re-run the tool");
  }
}

/// One thread of a tool's JSON: {"histogram": {"us": count}, count|cycles, min, max, avg}.
/// `limit_us` 0 = unknown: overflows (count - sum) are then put just above the last class.
namespace {

/// `where`.histogram's "<us>": <count> entries into `tool.counts`; their sum.
Expected<uint64_t> ReadToolHistogram(const std::string& path, const std::string& text,
                                     const std::string& where, const json& t, const char* count_key,
                                     ToolThread& tool) {
  auto hist = t.find("histogram");
  if (hist == t.end() || !hist->is_object()) {
    return JsonAt(path, text, fmt::format("\"{}\"", count_key),
                  fmt::format("{}.histogram missing", where),
                  "the file is not complete tool output; re-run the tool");
  }
  uint64_t sum = 0;
  for (const auto& [key, value] : hist->items()) {
    size_t pos = 0;
    int64_t us = 0;
    if (ParseScaledNs(key, pos, 1, us) != NumberError::kNone || pos != key.size() || us < 0 ||
        us > 100'000'000 || !value.is_number_unsigned()) {
      return JsonAt(path, text, fmt::format("\"{}\"", key),
                    fmt::format("{}.histogram entry \"{}\": {} is not a class in us with a count",
                                where, key, value.dump()),
                    "entries must be \"<us>\": <count>");
    }
    const auto index_us = static_cast<size_t>(us);
    if (tool.counts.size() <= index_us) tool.counts.resize(index_us + 1, 0);
    tool.counts[index_us] += value.get<uint64_t>();
    sum += value.get<uint64_t>();
  }
  return sum;
}

/// How many of the `outside` samples beyond the histogram wrapped (negative latencies):
/// avg * cycles = negatives * 2^64 + (the real sum, far below 2^63), so the count is the
/// nearest whole number, when it is plainly one; else the file is refused.
Expected<uint64_t> WrappedNegatives(const std::string& path, const std::string& text,
                                    const std::string& where, double avg, double max,
                                    uint64_t cycles, uint64_t outside) {
  const double kTwo64 = 18446744073709551616.0;
  const double ratio = avg * static_cast<double>(cycles) / kTwo64;
  const double rounded = std::round(ratio);
  if (std::fabs(ratio - rounded) > 0.25 || rounded < 1 || rounded > static_cast<double>(outside)) {
    return JsonAt(path, text, "\"avg\"",
                  fmt::format("{}: avg {} and max {} are corrupt (cyclictest's unsigned wrap of "
                              "negative latencies), but avg * cycles / 2^64 = {:.3f} does not "
                              "say how many of the {} samples outside the histogram are negative",
                              where, avg, max, ratio, outside),
                  "the file was edited; re-run cyclictest (without -x, negative latencies "
                  "cannot occur with clock_nanosleep)");
  }
  return static_cast<uint64_t>(rounded);
}

}  // namespace

Expected<results::ProbeResult> ProbeFromToolJson(const std::string& path, const std::string& text,
                                                 const std::string& where, const json& t,
                                                 const char* count_key, int index, int64_t limit_us,
                                                 int64_t unit_ns, bool wrap_possible,
                                                 Imported& out) {
  auto number = [&](const char* key) -> Expected<double> {
    auto it = t.find(key);
    if (it == t.end() || !it->is_number()) {
      return JsonAt(path, text, fmt::format("\"{}\"", key),
                    fmt::format("{}.{} missing or not a number", where, key),
                    "the file is not complete tool output; re-run the tool");
    }
    return it->get<double>();
  };
  auto count = number(count_key);
  if (!count) return count.error();
  auto min = number("min");
  if (!min) return min.error();
  auto max = number("max");
  if (!max) return max.error();
  auto avg = number("avg");
  if (!avg) return avg.error();
  const int cpu = t.contains("cpu") && t["cpu"].is_number_integer() ? t["cpu"].get<int>() : -1;
  const auto cycles = static_cast<uint64_t>(*count);
  results::ProbeResult probe = NewProbe(index, cpu);
  ToolThread tool;
  tool.where = where;
  auto read = ReadToolHistogram(path, text, where, t, count_key, tool);
  if (!read) return read.error();
  const uint64_t sum = *read;
  if (sum > cycles) {
    return JsonAt(
        path, text, fmt::format("\"{}\"", count_key),
        fmt::format("{}: histogram holds {} samples but {} is {}", where, sum, count_key, cycles),
        "the file was edited or is corrupt; re-run the tool");
  }
  const uint64_t outside = cycles - sum;
  // cyclictest 2.x keeps a latency in an unsigned 64-bit integer: a negative one (-x, a
  // clock step) wraps to about 1.8e19 us. It lands outside the histogram, adds ~1.8e19 to
  // the sum behind avg, and becomes max (compared unsigned, printed signed: negative).
  const bool wrapped = wrap_possible && (*avg >= 9223372036854775808.0 || *max < *min || *max < 0 ||
                                         *avg < *min || *avg > *max);
  uint64_t negatives = 0;
  if (wrapped) {
    auto n = WrappedNegatives(path, text, where, *avg, *max, cycles, outside);
    if (!n) return n.error();
    negatives = *n;
  }
  out.source_numbers.push_back({{"thread", index},
                                {"cpu", cpu},
                                {count_key, cycles},
                                {"min", *min},
                                {"avg", wrapped ? nlohmann::json(nullptr) : nlohmann::json(*avg)},
                                {"max", wrapped ? nlohmann::json(nullptr) : nlohmann::json(*max)},
                                {"unit_ns", unit_ns}});
  if (wrapped) {
    out.source_numbers.back()["wrapped"] = {
        {"avg_as_printed", *avg}, {"max_as_printed", *max}, {"negative_latencies", negatives}};
    out.warnings.push_back(fmt::format(
        "{}: {} negative latencies: cyclictest stores latencies unsigned, so they wrapped to "
        "about 1.8e19 us; its avg ({}) and max ({}) are corrupt and are not used; the count "
        "comes from avg * cycles / 2^64{}",
        where, negatives, *avg, *max,
        *max < 0 ? fmt::format(", the largest negative latency is max read as signed, {} us", *max)
                 : ", their values are unknown (counted at -1 us, the largest a negative whole-us "
                   "latency can be)"));
  }
  if (sum == 0) {
    if (cycles > 0) out.has_distribution = false;
    return probe;
  }
  const uint64_t overflows = outside - negatives;
  int64_t limit = limit_us > 0 ? limit_us : static_cast<int64_t>(tool.counts.size());
  limit = std::max(limit, static_cast<int64_t>(tool.counts.size()));
  if (overflows > 0) {
    out.warnings.push_back(fmt::format(
        "{}: {} of {} samples were histogram overflows (>= {} us): counted at {} us (clipped: "
        "their values are unknown){}; percentiles that land there, the jitter{} are lower bounds",
        where, overflows, cycles, limit, limit,
        wrapped
            ? ""
            : fmt::format(" except the max {} us", *max * static_cast<double>(unit_ns) / 1000.0),
        wrapped ? ", the max" : ""));
  }
  tool.limit_us = limit;
  tool.overflows = overflows;
  if (!wrapped) {
    tool.overflow_max_ns = std::llround(*max * static_cast<double>(unit_ns));
    tool.mean_ns = *avg * static_cast<double>(unit_ns);
  } else {
    tool.negatives = negatives;
    tool.negative_max_ns = *max < 0 ? std::llround(*max * static_cast<double>(unit_ns)) : -1000;
  }
  RecordTool(probe, tool);
  return probe;
}

Expected<Imported> ImportCyclictestJson(const std::string& path, const std::string& text) {
  auto doc = ParseJson(path, text);
  if (!doc) return doc.error();
  Imported out;
  auto threads = doc->find("thread");
  if (!doc->is_object() || threads == doc->end() || !threads->is_object()) {
    return At(path, 1, 1, "no \"thread\" object: not cyclictest --json output",
              "give the file cyclictest --json=FILE wrote, or name the format with --format");
  }
  std::string cmdline;
  for (const char* key : {"cmdline:", "cmdline"}) {
    if (auto it = doc->find(key); it != doc->end() && it->is_string())
      cmdline = it->get<std::string>();
  }
  if (std::regex_search(cmdline, std::regex(R"((^|\s)(-N|--nsecs)(\s|$))"))) {
    return At(path, 1, 1, "cyclictest ran with -N (ns): not supported yet",
              "re-run cyclictest without -N");
  }
  int64_t limit_us = 0;
  std::smatch m;
  if (std::regex_search(cmdline, m, std::regex(R"((?:-h|-H|--histogram|--histofall)[= ]?(\d+))"))) {
    limit_us = std::stoll(m[1].str());
  }
  for (const auto& [key, t] : threads->items()) {
    size_t pos = 0;
    int64_t index = 0;
    if (ParseScaledNs(key, pos, 1, index) != NumberError::kNone || pos != key.size() ||
        !t.is_object()) {
      return JsonAt(path, text, fmt::format("\"{}\"", key),
                    fmt::format("thread key \"{}\" is not a thread number", key),
                    "thread.N must be objects keyed by thread number");
    }
    auto probe = ProbeFromToolJson(path, text, "thread." + key, t, "cycles",
                                   static_cast<int>(index), limit_us, 1000, true, out);
    if (!probe) return probe.error();
    out.probes.push_back(std::move(*probe));
  }
  if (out.probes.empty()) {
    return At(path, 1, 1, "\"thread\" is empty", "the run measured nothing; re-run cyclictest");
  }
  if (!out.has_distribution) {
    out.probes.clear();
    out.warnings.push_back(
        "cyclictest ran without -h: the file holds only cycles, min, avg and max per thread, no "
        "distribution, so percentiles are unavailable (kept in config.inputs[].source_numbers); "
        "re-run cyclictest with -h 1000 (or more) to get them");
  }
  return out;
}

// ---- -h / -H text block ----

namespace {

struct HistText {
  std::vector<std::vector<uint64_t>> rows;  // rows[us][column]
  size_t columns = 0;
  // "Total", "Min", ...: cyclictest prints them unsigned (a wrapped value has 20 digits).
  std::map<std::string, std::vector<uint64_t>> totals;
  std::map<int, std::vector<uint64_t>> overflow_seqs;
  std::map<int, uint64_t> overflow_others;
};

constexpr std::array<std::pair<const char*, const char*>, 5> kSummaryLines = {{
    {"# Total:", "Total"},
    {"# Min Latencies:", "Min"},
    {"# Avg Latencies:", "Avg"},
    {"# Max Latencies:", "Max"},
    {"# Histogram Overflows:", "Overflows"},
}};

/// Parses whole numbers in `fields` from index `first`, or names the bad one.
Status Numbers(const std::string& path, uint64_t line,
               const std::vector<std::pair<std::string_view, size_t>>& fields, size_t first,
               std::vector<int64_t>& out) {
  for (size_t f = first; f < fields.size(); ++f) {
    size_t pos = 0;
    int64_t v = 0;
    const auto [text, col] = fields[f];
    if (ParseScaledNs(text, pos, 1, v) != NumberError::kNone || pos != text.size() || v < 0) {
      return At(path, line, col + 1, fmt::format("'{}' is not a whole number", text),
                "cyclictest writes whole numbers here; the file is edited or corrupt");
    }
    out.push_back(v);
  }
  return Status::Ok();
}

/// Parses cyclictest's unsigned summary numbers (up to 2^64 - 1), or names the bad one.
Status UnsignedNumbers(const std::string& path, uint64_t line,
                       const std::vector<std::pair<std::string_view, size_t>>& fields, size_t first,
                       std::vector<uint64_t>& out) {
  for (size_t f = first; f < fields.size(); ++f) {
    const auto [text, col] = fields[f];
    uint64_t v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
      return At(path, line, col + 1,
                fmt::format("'{}' is not a whole number from 0 to 2^64-1", text),
                "cyclictest writes unsigned whole numbers here; the file is edited or corrupt");
    }
    out.push_back(v);
  }
  return Status::Ok();
}

Status ParseHistLine(const std::string& path, uint64_t n, std::string_view line, HistText& h) {
  const auto fields = Fields(line);
  if (fields.empty()) return Status::Ok();
  if (line[0] == '#') {
    for (const auto& [prefix, name] : kSummaryLines) {
      if (line.substr(0, std::strlen(prefix)) == prefix) {
        std::vector<uint64_t> values;
        const size_t skip = Fields(prefix).size();
        if (Status s = UnsignedNumbers(path, n, fields, skip, values); !s) return s;
        h.totals[name] = std::move(values);
        return Status::Ok();
      }
    }
    if (line.substr(0, 9) == "# Thread " && fields.size() >= 3) {
      std::vector<int64_t> values;
      std::string_view id = fields[2].first;
      if (!id.empty() && id.back() == ':') id.remove_suffix(1);
      size_t pos = 0;
      int64_t thread = 0;
      if (ParseScaledNs(id, pos, 1, thread) != NumberError::kNone || pos != id.size()) {
        return At(path, n, fields[2].second + 1, fmt::format("'{}' is not a thread number", id),
                  "expected '# Thread N: cycle cycle ...'");
      }
      size_t end = fields.size();
      // "... # 00063 others"
      if (end >= 3 && fields[end - 1].first == "others" && fields[end - 3].first == "#") {
        std::vector<int64_t> others;
        if (Status s = Numbers(path, n, {fields[end - 2]}, 0, others); !s) return s;
        h.overflow_others[static_cast<int>(thread)] = static_cast<uint64_t>(others[0]);
        end -= 3;
      }
      std::vector<std::pair<std::string_view, size_t>> seqs(
          fields.begin() + 3, fields.begin() + static_cast<long>(end));
      if (Status s = Numbers(path, n, seqs, 0, values); !s) return s;
      auto& list = h.overflow_seqs[static_cast<int>(thread)];
      for (int64_t v : values) list.push_back(static_cast<uint64_t>(v));
      return Status::Ok();
    }
    return Status::Ok();  // "# Histogram", "# /dev/cpu_dma_latency set to 0us", ...
  }
  if (!std::isdigit(static_cast<unsigned char>(line[0]))) return Status::Ok();  // "T: 0 (...)"
  std::vector<int64_t> values;
  if (Status s = Numbers(path, n, fields, 0, values); !s) return s;
  if (values.size() < 2) {
    return At(path, n, line.size() + 1, "histogram row has no count",
              "rows are 'class_us count [count ...]'; the file is cut short?");
  }
  if (h.columns == 0) h.columns = values.size() - 1;
  if (values.size() - 1 != h.columns) {
    const size_t col =
        values.size() - 1 > h.columns ? fields[h.columns + 1].second + 1 : line.size() + 1;
    return At(path, n, col,
              fmt::format("histogram row has {} counts, earlier rows have {}", values.size() - 1,
                          h.columns),
              "every row needs one count per thread (plus the sum with -H)");
  }
  if (static_cast<size_t>(values[0]) != h.rows.size()) {
    return At(path, n, 1,
              fmt::format("histogram class {} where {} was expected", values[0], h.rows.size()),
              "rows must count up from 000000 in 1 us steps; the file is edited or cut?");
  }
  std::vector<uint64_t> row;
  for (size_t c = 1; c < values.size(); ++c) row.push_back(static_cast<uint64_t>(values[c]));
  h.rows.push_back(std::move(row));
  return Status::Ok();
}

/// The -h text read whole and its shape checked: the summary lines there, as many columns as
/// threads (plus a sum column with -H). `end_line` is where a missing line would have been.
Status ReadHistText(const std::string& path, HistText& h, uint64_t& end_line) {
  auto reader = LineReader::Open(path);
  if (!reader) return reader.error();
  std::string_view line;
  for (;;) {
    auto more = (*reader)->Next(line);
    if (!more) return more.error();
    if (!*more) break;
    if ((*reader)->last_line_unterminated() && !line.empty()) {
      return At(path, (*reader)->line_number(), line.size() + 1,
                "last line has no end (file cut short)",
                "re-run cyclictest or copy the whole file");
    }
    if (Status s = ParseHistLine(path, (*reader)->line_number(), line, h); !s) return s;
  }
  end_line = (*reader)->line_number() + 1;
  if (h.rows.empty() && h.totals.empty()) {
    return At(path, end_line, 1, "no histogram rows and no '# Total:' line",
              "give cyclictest's -h/-H output, or name the format with --format");
  }
  for (const auto& [prefix, name] : kSummaryLines) {
    if (!h.totals.count(name)) {
      return At(path, end_line, 1, fmt::format("missing '{}' line", prefix),
                "the file is cut short; copy cyclictest's whole -h output");
    }
  }
  const size_t threads = h.totals["Min"].size();
  if (threads == 0) {
    return At(path, end_line, 1, "'# Min Latencies:' lists no thread", "re-run cyclictest -h");
  }
  if (h.columns != threads && h.columns != threads + 1) {
    return At(path, end_line, 1,
              fmt::format("rows have {} counts but {} threads are summarised", h.columns, threads),
              "the file mixes two runs or was edited");
  }
  for (const char* name : {"Total", "Avg", "Max", "Overflows"}) {
    if (h.totals[name].size() < threads) {
      return At(path, end_line, 1,
                fmt::format("'{}' line has {} values for {} threads", name, h.totals[name].size(),
                            threads),
                "the file is edited or cut short");
    }
  }
  return Status::Ok();
}

/// Thread `t` of the -h text into `out`: its classes, its summary (a wrapped negative latency
/// named, never averaged), its overflows.
Status ImportHistThread(const std::string& path, HistText& h, size_t t, uint64_t end_line,
                        Imported& out) {
  const auto limit = static_cast<int64_t>(h.rows.size());
  std::vector<uint64_t> counts;
  uint64_t sum = 0;
  for (const auto& row : h.rows) {
    counts.push_back(row[t]);
    sum += row[t];
  }
  if (sum != static_cast<uint64_t>(h.totals["Total"][t])) {
    return At(path, end_line, 1,
              fmt::format("thread {}: rows sum to {} but '# Total:' says {}", t, sum,
                          h.totals["Total"][t]),
              "the rows are cut short or edited; copy the whole output");
  }
  const uint64_t overflows = h.totals["Overflows"][t];
  const uint64_t min_us = h.totals["Min"][t];
  const uint64_t avg_us = h.totals["Avg"][t];
  const uint64_t max_us = h.totals["Max"][t];
  // A negative latency wraps (cyclictest 2.x keeps it unsigned): it lands among the
  // overflows, max becomes it (printed unsigned: 20 digits), avg's double passes 2^63.
  constexpr uint64_t kHalf = uint64_t{1} << 63;
  const bool wrapped =
      max_us >= kHalf || avg_us >= kHalf || max_us < min_us || avg_us < min_us || avg_us > max_us;
  results::ProbeResult probe = NewProbe(static_cast<int>(t), -1);
  ToolThread tool;
  tool.where = fmt::format("thread {}", t);
  tool.counts = counts;
  tool.limit_us = limit;
  nlohmann::json numbers = {
      {"thread", t},   {"cycles", sum + overflows}, {"min", min_us},  {"avg", avg_us},
      {"max", max_us}, {"overflows", overflows},    {"unit_ns", 1000}};
  if (wrapped) {
    if (overflows == 0) {
      return At(path, end_line, 1,
                fmt::format("thread {}: avg {} / max {} look wrapped (cyclictest's unsigned "
                            "wrap of a negative latency) but '# Histogram Overflows:' is 0",
                            t, avg_us, max_us),
                "a wrapped latency is always an overflow; the file is edited");
    }
    const auto signed_max = static_cast<int64_t>(max_us);  // two's complement
    tool.unknown_sign = overflows;
    tool.negative_max_ns = signed_max < 0 ? signed_max * 1000 : -1000;
    numbers["avg"] = nullptr;
    numbers["max"] = nullptr;
    numbers["wrapped"] = {{"avg_as_printed", avg_us}, {"max_as_printed", max_us}};
    out.warnings.push_back(fmt::format(
        "thread {}: negative latencies: cyclictest stores latencies unsigned, so they wrapped "
        "to about 1.8e19 us; its avg ({}) and max ({}) are corrupt and are not used; {}; the -h "
        "text does not say how many of the {} overflows are negative (cyclictest --json's avg "
        "does), so the min, max, mean and jitter are not known",
        t, avg_us, max_us,
        signed_max < 0
            ? fmt::format("the largest negative latency is max read as signed, {} us", signed_max)
            : "their values are unknown",
        overflows));
  } else {
    tool.overflows = overflows;
    tool.overflow_max_ns = static_cast<int64_t>(max_us) * 1000;
    tool.mean_ns = static_cast<double>(avg_us) * 1000.0;
    tool.mean_bound = results::Bound::kLowerBound;
    tool.mean_reason = fmt::format(
        "thread {}: the mean is cyclictest's -h average, truncated to whole us (a lower bound "
        "by less than 1 us)",
        t);
    if (overflows > 0) {
      out.warnings.push_back(fmt::format(
          "thread {}: {} of {} samples were histogram overflows (>= {} us): counted at {} us "
          "(clipped: their values are unknown) except the max {} us; percentiles that land "
          "there and the jitter are lower bounds",
          t, overflows, sum + overflows, limit, limit, max_us));
    }
  }
  RecordTool(probe, tool);
  if (probe.linear) {
    const int ti = static_cast<int>(t);
    probe.linear->overflow_seqs = h.overflow_seqs[ti];
    probe.linear->overflow_seqs_dropped = h.overflow_others[ti];
  }
  out.source_numbers.push_back(std::move(numbers));
  out.probes.push_back(std::move(probe));
  return Status::Ok();
}

}  // namespace

Expected<Imported> ImportCyclictestHistogram(const std::string& path) {
  HistText h;
  uint64_t end_line = 0;
  if (Status s = ReadHistText(path, h, end_line); !s) return s.error();
  Imported out;
  const size_t threads = h.totals["Min"].size();
  for (size_t t = 0; t < threads; ++t) {
    if (Status s = ImportHistThread(path, h, t, end_line, out); !s) return s.error();
  }
  out.warnings.push_back(
      "cyclictest's -h text gives 1 us classes and a whole-us average: values are class lower "
      "edges; the mean is computed from the classes when no sample overflowed, else it is "
      "cyclictest's truncated average");
  return out;
}

// ---- -v lines ----

// cyclictest -v prints each "Thread N Interval: X" after adding the thread distance (-d,
// 500 us by default, 0 with -h) to the running interval: X is thread N's interval plus one
// distance (checked against cyclictest 2.40's T: lines: `-t2 -i1000 -v` prints 1500 and 2000
// for threads running at 1000 and 1500 us). With two or more threads the distance is the
// constant step between the headers; with one thread, or steps that differ, it cannot be read
// from the file: -1, and the sample times are unknown.
namespace {
int64_t VerboseThreadDistanceUs(const std::map<int64_t, int64_t>& header_us) {
  if (header_us.size() < 2) return -1;
  std::optional<int64_t> step;
  int64_t previous_thread = -1;
  int64_t previous = 0;
  for (const auto& [thread, us] : header_us) {
    if (previous_thread >= 0) {
      const int64_t d = us - previous;
      if (thread != previous_thread + 1 || d < 0 || (step && *step != d)) return -1;
      step = d;
    }
    previous_thread = thread;
    previous = us;
  }
  // The first thread's interval is its header minus one distance: it must stay positive.
  return header_us.begin()->second - *step > 0 ? *step : -1;
}
}  // namespace

Expected<Imported> ImportCyclictestVerbose(const std::string& path, SampleConsumer* samples) {
  auto reader = LineReader::Open(path);
  if (!reader) return reader.error();
  Imported out;
  std::map<int64_t, size_t> probe_of;  // cyclictest thread -> probe index
  std::map<int64_t, int64_t> interval_us;
  std::optional<int64_t> distance_us;  // -1: unknown
  std::string_view line;
  for (;;) {
    auto more = (*reader)->Next(line);
    if (!more) return more.error();
    if (!*more) break;
    const uint64_t n = (*reader)->line_number();
    const auto fields = Fields(line);
    if (fields.empty() || line[0] == '#') continue;
    const std::string_view head = fields[0].first;
    // "Max CPUs = 2", "Online CPUs = 2", "Using 1 cpus." (-a), final status lines.
    if (head == "Max" || head == "Online" || head == "Using" || head == "T:") continue;
    if (head == "Thread") {  // "Thread 0 Interval: 1500"
      std::vector<int64_t> v;
      if (fields.size() == 4 && fields[2].first == "Interval:" &&
          Numbers(path, n, {fields[1], fields[3]}, 0, v)) {
        interval_us[v[0]] = v[1];
      }
      continue;
    }
    // "       0:       1:      12" = thread:loop:latency_us
    size_t pos = 0;
    int64_t parts[3] = {0, 0, 0};
    size_t found = 0;
    while (found < 3) {
      while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
      const size_t start = pos;
      if (ParseScaledNs(line, pos, 1, parts[found]) != NumberError::kNone ||
          (found < 2 && parts[found] < 0)) {
        if (pos >= line.size() || (*reader)->last_line_unterminated()) {
          return At(path, n, start + 1,
                    fmt::format("line has {} of the 3 fields thread:loop:latency_us", found),
                    "the line is cut short; the last line of a killed run can be dropped");
        }
        return At(path, n, start + 1,
                  fmt::format("'{}' is not a whole number", line.substr(start, 12)),
                  "cyclictest -v lines are thread:loop:latency_us");
      }
      ++found;
      while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
      if (found < 3) {
        if (pos >= line.size() || line[pos] != ':') {
          return At(path, n, pos + 1,
                    fmt::format("line has {} of the 3 fields thread:loop:latency_us", found),
                    "cyclictest -v lines are thread:loop:latency_us");
        }
        ++pos;
      }
    }
    while (pos < line.size() && std::isspace(static_cast<unsigned char>(line[pos]))) ++pos;
    if (pos != line.size()) {
      return At(path, n, pos + 1, "more than 3 fields",
                "cyclictest -v lines are thread:loop:latency_us");
    }
    if (parts[0] > 0xFFFE) {
      return At(path, n, 1, "thread number above 65534", "the file is not cyclictest -v output");
    }
    if (!distance_us) distance_us = VerboseThreadDistanceUs(interval_us);
    auto [it, added] = probe_of.try_emplace(parts[0], out.probes.size());
    if (added) {
      out.probes.push_back(NewProbe(static_cast<int>(parts[0]), -1));
      const auto iv = interval_us.find(parts[0]);
      // The header is the thread's interval plus the distance (see VerboseThreadDistanceUs).
      out.probes.back().interval_ns =
          iv == interval_us.end() || *distance_us < 0 ? 0 : (iv->second - *distance_us) * 1000;
    }
    results::ProbeResult& p = out.probes[it->second];
    ++p.periods_elapsed;
    if (parts[2] == 0) {
      // cyclictest -v prints, per cycle, the largest of (0, latency) with the cycle number
      // where it rose above 0: a latency <= 0 us leaves both as they were, so the line shows
      // 0 and the previous cycle's number. Its value is not in the file.
      ++p.latencies_not_printed;
      continue;
    }
    const int64_t latency_ns = parts[2] * 1000;
    p.histogram.Record(latency_ns);
    if (samples != nullptr) {
      const auto seq = static_cast<uint64_t>(parts[1]);
      samples->Add(TimedSample{static_cast<uint16_t>(parts[0]), 0xFFFF, seq,
                               static_cast<int64_t>(seq) * p.interval_ns, latency_ns});
      ++out.samples_streamed;
    }
  }
  if (out.probes.empty()) {
    return At(path, (*reader)->line_number() + 1, 1, "no thread:loop:latency lines",
              "give cyclictest -v output, or name the format with --format");
  }
  for (const auto& p : out.probes) {
    if (p.latencies_not_printed == 0) continue;
    out.warnings.push_back(fmt::format(
        "thread {}: {} of {} lines print latency 0 with the previous line's cycle number: "
        "cyclictest -v prints that for a latency <= 0 us (below 1 us, or negative with -x or a "
        "clock step) and not its value; counted as 'latency <= 0, value not printed' "
        "(latencies_not_printed), kept out of the statistics and samples.bin, which cover the {} "
        "printed samples",
        p.index, p.latencies_not_printed, p.periods_elapsed, p.histogram.count()));
  }
  if (!interval_us.empty() && distance_us.value_or(-1) < 0) {
    out.warnings.push_back(fmt::format(
        "sample times unknown (written as 0): cyclictest -v's 'Thread N Interval:' line is the "
        "interval plus the thread distance (-d, 500 us unless -d or -h changed it), and {} "
        "cannot tell the distance; run cyclictest with -d0 to make the line the interval",
        interval_us.size() == 1 ? "one thread's line" : "these lines"));
  }
  out.warnings.push_back("cyclictest -v latencies are whole microseconds");
  return out;
}

}  // namespace rtpulse::importers::internal
