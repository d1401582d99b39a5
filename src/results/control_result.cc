#include "results/control_result.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/histogram.h"
#include "core/parse.h"
#include "core/printable.h"
#include "results/csv_field.h"
#include "results/latency_result.h"

namespace rtpulse::results {
namespace {

constexpr int64_t kControlNsPerUs = 1000;

int64_t ControlFloorDivUs(int64_t ns) {
  const int64_t q = ns / kControlNsPerUs;
  return (ns % kControlNsPerUs != 0 && ns < 0) ? q - 1 : q;
}

/// ns as microseconds with three decimals, exactly (no floating point): -1500 -> "-1.500".
std::string ControlUsText(int64_t ns) {
  const bool negative = ns < 0;
  // Magnitude as unsigned, so INT64_MIN has one too.
  const uint64_t mag = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03d}", negative ? "-" : "", mag / 1000, mag % 1000);
}

/// A row's derived durations, or why it has none. Latency and response only for a row whose
/// release is known (0 otherwise, never used).
struct ControlDurations {
  int64_t latency_ns = 0;
  int64_t exec_ns = 0;
  int64_t response_ns = 0;
};

Expected<ControlDurations> ControlRowDurations(const ControlJobRow& row) {
  ControlDurations d;
  if (__builtin_sub_overflow(row.end_ns, row.start_ns, &d.exec_ns) ||
      (row.release_known && (__builtin_sub_overflow(row.start_ns, row.release_ns, &d.latency_ns) ||
                             __builtin_sub_overflow(row.end_ns, row.release_ns, &d.response_ns)))) {
    return Failure(fmt::format("job {}: release {} ns, start {} ns, end {} ns overflow 64 bits",
                               row.job, row.release_ns, row.start_ns, row.end_ns));
  }
  if (d.exec_ns < 0 || d.response_ns < 0) {
    return Failure(fmt::format(
        "job {}: end {} ns lies before its {} ({} ns): a job ends after it starts and after its "
        "release (a bug in the control loop's timestamps, not clamped to 0)",
        row.job, row.end_ns, d.exec_ns < 0 ? "start" : "release",
        d.exec_ns < 0 ? row.start_ns : row.release_ns));
  }
  return d;
}

Status ControlCheckRows(const std::vector<ControlJobRow>& rows) {
  for (const auto& row : rows) {
    auto d = ControlRowDurations(row);
    if (!d) return d.error();
  }
  return Status::Ok();
}

/// The value of nearest rank ceil(p/100 * n) of ascending `sorted` (n > 0).
int64_t ControlNearestRank(const std::vector<int64_t>& sorted, double percentile) {
  return sorted[Histogram::NearestRank(percentile, sorted.size()) - 1];
}

/// Median of ascending `sorted` (n > 0): the middle value, the mean of the two middle ones.
double ControlMedian(const std::vector<int64_t>& sorted) {
  const size_t n = sorted.size();
  if (n % 2 == 1) return static_cast<double>(sorted[n / 2]);
  // Halved separately so two huge values cannot overflow.
  const auto a = static_cast<long double>(sorted[n / 2 - 1]);
  const auto b = static_cast<long double>(sorted[n / 2]);
  return static_cast<double>((a + b) / 2);
}

/// The quantiles rtpulse prints for each duration, with their labels.
struct ControlQuantile {
  const char* label;
  double percentile;
};
constexpr ControlQuantile kControlQuantiles[] = {
    {"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99.9", 99.9}, {"p99.99", 99.99}, {"p99.999", 99.999}};

std::string ControlDurationBlock(const std::string& heading, std::vector<int64_t> values_ns) {
  std::sort(values_ns.begin(), values_ns.end());
  std::string out = heading + ":\n";
  if (values_ns.empty()) return out + "  n/a: no job's release is known\n";
  const uint64_t n = values_ns.size();
  out += fmt::format("  min: {} us\n", ControlUsText(values_ns.front()));
  for (const auto& q : kControlQuantiles) {
    const uint64_t needed = MinCountForPercentile(q.percentile);
    if (n < needed) {
      out += fmt::format("  {}: n/a: needs >= {} jobs\n", q.label, needed);
    } else {
      out += fmt::format("  {}: {} us\n", q.label,
                         ControlUsText(ControlNearestRank(values_ns, q.percentile)));
    }
  }
  out += fmt::format("  max: {} us\n", ControlUsText(values_ns.back()));
  return out;
}

std::string ControlStudyBlock(const StudyStats& s) {
  std::string out;
  out += fmt::format("Count: {}\n", s.count);
  out += fmt::format("Sum: {}\n", s.sum_us);
  out += fmt::format("Mean: {:.2f}\n", s.mean_us);
  out += fmt::format("Median: {:.2f}\n", s.median_us);
  out += fmt::format("Min: {}\n", s.min_us);
  out += fmt::format("Max: {}\n", s.max_us);
  out += s.count < 2 ? std::string("StdDev: n/a (needs >= 2 values)\n")
                     : fmt::format("StdDev: {:.2f}\n", s.stddev_us);
  out += fmt::format("P90: {}\n", s.p90_us);
  out += fmt::format("P99: {}\n", s.p99_us);
  return out;
}

constexpr const char* kControlColumns[] = {
    "job",     "release_ns",  "start_ns",       "end_ns", "latency_ns",
    "exec_ns", "response_ns", "skipped_before", "miss",   "release_known"};
enum ControlColumn : size_t {
  kJob,
  kRelease,
  kStart,
  kEnd,
  kLatency,
  kExec,
  kResponse,
  kSkippedBefore,
  kMiss,
  kReleaseKnown
};

/// A jobs.csv line; `columns` is 10, or 9 for a file from before release_known.
Expected<ControlJobRow> ControlParseRow(std::string_view line, size_t columns,
                                        const std::string& where) {
  const auto fields = SplitFields(line);
  if (fields.size() != columns) {
    return UsageError(
        fmt::format("{}: {} fields where jobs.csv has {} ({}): '{}'", where, fields.size(), columns,
                    columns > kReleaseKnown ? kJobLogHeader : kJobLogHeaderWithoutReleaseKnown,
                    Printable(line)));
  }
  // release_known first: it says which fields a job whose release is unknown leaves empty.
  bool known = true;
  if (columns > kReleaseKnown) {
    if (fields[kReleaseKnown] != "0" && fields[kReleaseKnown] != "1") {
      return UsageError(fmt::format("{}: release_known '{}' is not 0 or 1", where,
                                    Printable(fields[kReleaseKnown])));
    }
    known = fields[kReleaseKnown] == "1";
  }
  int64_t v[kReleaseKnown] = {};
  for (size_t i = 0; i < kReleaseKnown; ++i) {
    const bool unknowable = i == kRelease || i == kLatency || i == kResponse;
    if (!known && unknowable) {
      if (!fields[i].empty()) {
        return UsageError(fmt::format(
            "{}: {} '{}' given for a job whose release is unknown (release_known 0 leaves "
            "release_ns, latency_ns and response_ns empty)",
            where, kControlColumns[i], Printable(fields[i])));
      }
      continue;
    }
    if (!known && i == kMiss && fields[i].empty()) continue;  // not known to have missed
    auto parsed = ParseCsvInteger(
        fields[i], where, kControlColumns[i],
        i == kMiss ? " of 0 or 1 (jobs.csv holds integers only; rewrite it with rtpulse control)"
                   : " of ns (jobs.csv holds integers only; rewrite it with rtpulse control)");
    if (!parsed) return parsed.error();
    v[i] = *parsed;
  }
  if (v[kJob] < 0) return UsageError(fmt::format("{}: job {} is negative", where, v[kJob]));
  if (v[kSkippedBefore] < 0 || v[kSkippedBefore] > UINT32_MAX) {
    return UsageError(fmt::format("{}: skipped_before {} is out of range (0 to {})", where,
                                  v[kSkippedBefore], UINT32_MAX));
  }
  if (v[kMiss] != 0 && v[kMiss] != 1) {
    return UsageError(fmt::format("{}: miss '{}' is not 0 or 1", where, v[kMiss]));
  }
  if (!known && fields[kMiss] == "0") {
    return UsageError(fmt::format(
        "{}: miss 0 for a job whose release is unknown (it is empty unless the miss is certain, "
        "then 1)",
        where));
  }
  ControlJobRow row;
  row.job = static_cast<uint64_t>(v[kJob]);
  row.release_known = known;
  // An unknown release: the grid's new anchor is the job's start (ControlJobRow).
  row.release_ns = known ? v[kRelease] : v[kStart];
  row.start_ns = v[kStart];
  row.end_ns = v[kEnd];
  row.skipped_before = static_cast<uint32_t>(v[kSkippedBefore]);
  row.miss = v[kMiss] == 1;
  auto d = ControlRowDurations(row);
  if (!d) return UsageError(fmt::format("{}: {}", where, d.error().message));
  const struct {
    ControlColumn column;
    int64_t derived;
    const char* rule;
  } checks[] = {{kLatency, d->latency_ns, "start_ns - release_ns"},
                {kExec, d->exec_ns, "end_ns - start_ns"},
                {kResponse, d->response_ns, "end_ns - release_ns"}};
  for (const auto& c : checks) {
    if (!known && c.column != kExec) continue;
    if (v[c.column] != c.derived) {
      return UsageError(fmt::format("{}: {} {} is not {} = {}", where, kControlColumns[c.column],
                                    v[c.column], c.rule, c.derived));
    }
  }
  int64_t sum = 0;
  if (known && (__builtin_add_overflow(v[kLatency], v[kExec], &sum) || sum != v[kResponse])) {
    return UsageError(fmt::format("{}: latency_ns {} + exec_ns {} is not response_ns {}", where,
                                  v[kLatency], v[kExec], v[kResponse]));
  }
  return row;
}

}  // namespace

uint64_t MinCountForPercentile(double percentile) {
  if (percentile >= 100) return UINT64_MAX;
  auto n = static_cast<uint64_t>(std::max(1.0, std::ceil(100.0 / (100.0 - percentile) - 1e-6)));
  // The formula's rounding settled against the rank rule itself.
  while (Histogram::NearestRank(percentile, n) >= n) ++n;
  while (n > 1 && Histogram::NearestRank(percentile, n - 1) < n - 1) --n;
  return n;
}

Expected<StudyStats> ComputeStudyStats(const std::vector<int64_t>& values_us) {
  if (values_us.empty()) {
    return UsageError(
        "no response times to summarise (the configuration completed no job; run it with "
        "--jobs N >= 1)");
  }
  std::vector<int64_t> sorted = values_us;
  std::sort(sorted.begin(), sorted.end());
  StudyStats s;
  s.count = sorted.size();
  Int128 sum = 0;
  Int128 sum_sq = 0;
  for (int64_t v : sorted) {
    sum += v;
    sum_sq += static_cast<Int128>(v) * v;
  }
  s.sum_us = static_cast<int64_t>(sum);
  // Below 2^53 both operands are exact doubles, so the quotient is correctly rounded (what an
  // exact-fraction mean rounds to, e.g. Python's statistics.mean).
  constexpr Int128 kExactDouble = Int128{1} << 53;
  s.mean_us = (sum < kExactDouble && sum > -kExactDouble)
                  ? static_cast<double>(sum) / static_cast<double>(s.count)
                  : static_cast<double>(static_cast<long double>(sum) / s.count);
  s.median_us = ControlMedian(sorted);
  s.min_us = sorted.front();
  s.max_us = sorted.back();
  if (s.count >= 2) {
    // n * sum(x^2) - sum(x)^2 = n * sum((x - mean)^2), exact in 128 bits; divided by
    // n (n - 1) for the sample variance.
    const Int128 n = s.count;
    const Int128 ss_n = n * sum_sq - sum * sum;
    const long double var =
        static_cast<long double>(ss_n) / (static_cast<long double>(n) * (s.count - 1));
    s.stddev_us = static_cast<double>(std::sqrt(var));
  }
  s.p90_us = ControlNearestRank(sorted, 90);
  s.p99_us = ControlNearestRank(sorted, 99);
  return s;
}

std::vector<int64_t> ResponseTimesUs(const std::vector<ControlJobRow>& rows) {
  std::vector<int64_t> us;
  us.reserve(rows.size());
  for (const auto& row : rows) {
    if (row.release_known) us.push_back(ControlFloorDivUs(row.end_ns - row.release_ns));
  }
  return us;
}

Status WriteResponseTimes(const std::string& path, const std::vector<ControlJobRow>& rows) {
  if (Status s = ControlCheckRows(rows); !s) return s;
  std::string text;
  text.reserve(rows.size() * 8);
  for (int64_t us : ResponseTimesUs(rows)) {
    text += std::to_string(us);
    text += '\n';
  }
  return WriteFileAtomic(path, text);
}

std::string FormatJobLog(const std::vector<ControlJobRow>& rows) {
  std::string text = std::string(kJobLogHeader) + "\n";
  text.reserve(rows.size() * 80);
  for (const auto& r : rows) {
    if (r.release_known) {
      text += fmt::format("{},{},{},{},{},{},{},{},{},1\n", r.job, r.release_ns, r.start_ns,
                          r.end_ns, r.start_ns - r.release_ns, r.end_ns - r.start_ns,
                          r.end_ns - r.release_ns, r.skipped_before, r.miss ? 1 : 0);
    } else {
      text += fmt::format("{},,{},{},,{},,{},{},0\n", r.job, r.start_ns, r.end_ns,
                          r.end_ns - r.start_ns, r.skipped_before, r.miss ? "1" : "");
    }
  }
  return text;
}

Status WriteJobLog(const std::string& path, const std::vector<ControlJobRow>& rows) {
  if (Status s = ControlCheckRows(rows); !s) return s;
  return WriteFileAtomic(path, FormatJobLog(rows));
}

Expected<std::vector<ControlJobRow>> ReadJobLog(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return UsageError(fmt::format("cannot read '{}': {}", Printable(path), std::strerror(errno)));
  }
  std::vector<ControlJobRow> rows;
  std::string line;
  size_t line_no = 0;
  size_t columns = std::size(kControlColumns);
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = fmt::format("{}:{}", Printable(path), line_no);
    if (line_no == 1) {
      if (line == kJobLogHeaderWithoutReleaseKnown) {
        columns = kReleaseKnown;
      } else if (line != kJobLogHeader) {
        return UsageError(fmt::format(
            "{}: header '{}' is not jobs.csv's ({}, or before the release_known column {})", where,
            Printable(line), kJobLogHeader, kJobLogHeaderWithoutReleaseKnown));
      }
      continue;
    }
    auto row = ControlParseRow(line, columns, where);
    if (!row) return row.error();
    if (!rows.empty() && row->job <= rows.back().job) {
      return UsageError(fmt::format("{}: job {} does not follow job {} (jobs increase)", where,
                                    row->job, rows.back().job));
    }
    // A job whose release is unknown anchors the grid on its start: that increases too.
    if (!rows.empty() && row->release_ns <= rows.back().release_ns) {
      return UsageError(fmt::format(
          "{}: {} {} is not after the previous job's {} {}", where,
          row->release_known ? "release_ns" : "start_ns (its release unknown)", row->release_ns,
          rows.back().release_known ? "release" : "start", rows.back().release_ns));
    }
    rows.push_back(*row);
  }
  if (line_no == 0) {
    return UsageError(fmt::format("{} is empty: not even jobs.csv's header ({})", Printable(path),
                                  kJobLogHeader));
  }
  return rows;
}

std::string FormatStatisticalReport(const std::vector<ControlJobRow>& rows,
                                    const ControlScenarioFacts& facts) {
  std::string out = fmt::format("# rtpulse control: {}\n", facts.configuration);
  out +=
      "# The study's table: response times in microseconds, over exactly the values of "
      "response_times.txt (one per job whose release is known, whole us rounded down)\n";
  const auto us = ResponseTimesUs(rows);
  auto study = ComputeStudyStats(us);
  if (study) {
    out += ControlStudyBlock(*study);
  } else {
    out += rows.empty() ? "Count: 0\n(no job completed: nothing to summarise)\n"
                        : "Count: 0\n(no job's release is known: no response to summarise)\n";
  }
  out += fmt::format("# {}; {}; {}; source: response_times.txt\n", kStudyStdDevRule,
                     kStudyPercentileRule, kStudyMedianRule);
  out += "\n";
  uint64_t misses = 0;
  uint64_t unknown = 0;
  uint64_t unknown_misses = 0;
  uint64_t skipped_rows = 0;
  for (const auto& r : rows) {
    misses += r.miss ? 1 : 0;
    skipped_rows += r.skipped_before;
    if (!r.release_known) {
      ++unknown;
      unknown_misses += r.miss ? 1 : 0;
    }
  }
  if (!rows.empty()) {
    out +=
        "rtpulse statistics over jobs.csv: exact ns values shown in us, nearest rank; a "
        "percentile needs at least 1 / (1 - p) jobs to be more than the maximum, and is n/a "
        "below that";
    out += unknown == 0 ? std::string("\n")
                        : fmt::format(
                              "; latency and response over the {} jobs whose release is "
                              "known, execution over all {}\n",
                              rows.size() - unknown, rows.size());
    std::vector<int64_t> latency, exec, response;
    latency.reserve(rows.size());
    exec.reserve(rows.size());
    response.reserve(rows.size());
    for (const auto& r : rows) {
      exec.push_back(r.end_ns - r.start_ns);
      if (!r.release_known) continue;
      latency.push_back(r.start_ns - r.release_ns);
      response.push_back(r.end_ns - r.release_ns);
    }
    out += ControlDurationBlock("Wake-up latency (start - release)", std::move(latency));
    out += ControlDurationBlock("Execution (end - start)", std::move(exec));
    out += ControlDurationBlock("Response (end - release)", std::move(response));
    out += "\n";
  }
  out += fmt::format("Period: {} us\n", ControlUsText(facts.period_ns));
  out += fmt::format("Deadline: {} us\n", ControlUsText(facts.deadline_ns));
  const uint64_t accounted = rows.size() + facts.skipped;
  out += fmt::format(
      "Releases: {}{}\n", facts.releases,
      accounted == facts.releases
          ? std::string()
          : fmt::format(" (WARNING: jobs + skipped = {}, not the releases)", accounted));
  out += fmt::format("Jobs: {}\n", rows.size());
  out += fmt::format("Releases unknown: {}{}\n", unknown,
                     unknown == 0
                         ? std::string()
                         : fmt::format(" job{} (SCHED_DEADLINE restarted its period where the loop "
                                       "cannot see: no latency and no response for them, not 0; "
                                       "{} of them certain misses, their execution alone above the "
                                       "deadline)",
                                       unknown == 1 ? "" : "s", unknown_misses));
  // jobs.csv's skipped_before counts the releases before each job; those the last job ran
  // past follow no job, so the loop reports them apart.
  out += fmt::format(
      "Skipped releases: {} ({} after the last job){}\n", facts.skipped, facts.skipped_after_last,
      skipped_rows + facts.skipped_after_last == facts.skipped
          ? std::string()
          : fmt::format(" (WARNING: jobs.csv's skipped_before adds up to {}, plus {} after the "
                        "last job)",
                        skipped_rows, facts.skipped_after_last));
  // With releases unknown and not known to have missed, the count is a lower bound.
  const uint64_t uncertain = unknown - unknown_misses;
  out += fmt::format(
      "Deadline misses: {}{} (end > release + deadline; skipped releases are "
      "counted above, not here){}\n",
      uncertain > 0 ? "at least " : "", misses,
      misses == facts.misses ? std::string()
                             : fmt::format(" (WARNING: the loop counted {})", facts.misses));
  if (uncertain > 0) {
    out += fmt::format(
        "  ({} job{} whose release is unknown may have missed too: not counted, not known)\n",
        uncertain, uncertain == 1 ? "" : "s");
  }
  out += fmt::format("Interrupted: {}\n",
                     facts.interrupted ? "yes: partial results, the run was stopped" : "no");
  if (facts.notes.empty()) {
    out += "Notes: none\n";
  } else {
    out += "Notes:\n";
    for (const auto& note : facts.notes) out += "  - " + note + "\n";
  }
  return out;
}

Status WriteStatisticalReport(const std::string& path, const std::vector<ControlJobRow>& rows,
                              const ControlScenarioFacts& facts) {
  if (Status s = ControlCheckRows(rows); !s) return s;
  return WriteFileAtomic(path, FormatStatisticalReport(rows, facts));
}

ControlSummaryRow SummarizeControlScenario(const std::string& scenario,
                                           const std::string& configuration,
                                           const std::vector<ControlJobRow>& rows,
                                           uint64_t skipped) {
  ControlSummaryRow s;
  s.scenario = scenario;
  s.configuration = configuration;
  s.jobs = rows.size();
  s.skipped = skipped;
  if (rows.empty()) return s;
  std::vector<int64_t> exec;
  exec.reserve(rows.size());
  std::optional<int64_t> max_latency_ns;
  for (const auto& r : rows) {
    s.misses += r.miss ? 1 : 0;
    s.misses_unknown += !r.release_known && !r.miss ? 1 : 0;
    exec.push_back(r.end_ns - r.start_ns);
    if (!r.release_known) continue;
    ++s.responses;
    max_latency_ns = std::max(max_latency_ns.value_or(INT64_MIN), r.start_ns - r.release_ns);
  }
  std::sort(exec.begin(), exec.end());
  s.median_exec_us = ControlMedian(exec) / 1000.0;
  if (auto study = ComputeStudyStats(ResponseTimesUs(rows))) {
    s.mean_response_us = study->mean_us;
    s.p99_response_us = study->p99_us;
    s.max_response_us = study->max_us;
    s.max_latency_us = ControlFloorDivUs(*max_latency_ns);
  }
  return s;
}

std::string FormatControlSummary(const std::vector<ControlSummaryRow>& rows) {
  const std::vector<std::string> head = {
      "scenario",     "configuration", "jobs",        "skipped",        "misses",
      "mean resp us", "p99 resp us",   "max resp us", "max latency us", "median exec us"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) {
    auto or_na = [](const auto& value, const char* format) {
      return value ? fmt::format(fmt::runtime(format), *value) : std::string("n/a");
    };
    cells.push_back({r.scenario, r.configuration, std::to_string(r.jobs), std::to_string(r.skipped),
                     WithBound(std::to_string(r.misses), MissesBound(r.misses_unknown), ">="),
                     or_na(r.mean_response_us, "{:.2f}"), or_na(r.p99_response_us, "{}"),
                     or_na(r.max_response_us, "{}"), or_na(r.max_latency_us, "{}"),
                     or_na(r.median_exec_us, "{:.3f}")});
  }
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (size_t c = 0; c < row.size(); ++c) {
      // Names left-aligned, numbers right-aligned.
      out +=
          c < 2 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
      out += c + 1 < row.size() ? "  " : "";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(head);
  for (const auto& row : cells) out += line(row);
  out +=
      "response times in whole us rounded down (as in response_times.txt; p99 by nearest "
      "rank); max latency floor(ns / 1000); median exec in us from the ns values\n";
  for (const auto& r : rows) {
    if (r.responses == r.jobs) continue;
    out += fmt::format(
        "{}: {} of {} jobs' releases unknown (SCHED_DEADLINE restarted its period): response "
        "and latency over the other {}; misses counted among them only when certain, so its "
        "misses are a lower bound\n",
        r.scenario, r.jobs - r.responses, r.jobs, r.responses);
  }
  return out;
}

}  // namespace rtpulse::results
