#include "results/cyclictest_format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "core/clock.h"
#include "results/log_percentiles.h"
#include "stats/summary.h"

namespace rtpulse::results {
namespace {

int64_t ToUnit(int64_t ns, bool nsecs) {
  return nsecs ? ns : ns / kNsPerUs;
}

/// cyclictest's integer average: sum / cycles in the output unit.
int64_t IntegerAverage(const Histogram& h, bool nsecs) {
  if (h.count() == 0) return 0;
  return ToUnit(h.sum() / static_cast<int64_t>(h.count()), nsecs);
}

std::string RfcTime(int64_t realtime_ns) {
  const time_t secs = static_cast<time_t>(realtime_ns / kNsPerSec);
  tm utc{};
  gmtime_r(&secs, &utc);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S +0000", &utc);
  return buf;
}

Histogram MergedHistogram(const PathRun& path) {
  Histogram all;
  for (const auto& p : path.probes) all.Merge(p.histogram);
  return all;
}

/// Per-period statistics are known for every thread of the path (rtpulse's own runs; not an
/// import with skipped periods or inexact statistics).
bool PathHasPerPeriod(const PathRun& path) {
  for (const auto& p : path.probes) {
    if (!HasPerPeriod(p) || p.bounds.Any()) return false;
  }
  return !path.probes.empty();
}

Histogram MergedPerPeriodHistogram(const PathRun& path) {
  Histogram all;
  for (const auto& p : path.probes) {
    all.Merge(p.histogram);
    all.Merge(p.skipped_histogram);
  }
  return all;
}

/// Exact values for stats::kPercentiles from the path's samples log, if it has them in this
/// list (one of ExactPathPercentiles' lists); none: the bucket edges stand.
using ExactValues = std::optional<std::vector<int64_t>>;
ExactValues ExactList(const PathRun& path, const std::vector<int64_t>& list) {
  if (!path.exact) return std::nullopt;
  return PickPercentiles(*path.exact, list, stats::kPercentiles);
}

/// The list of `lists` for probe `i`, or an empty one when they were not computed.
const std::vector<int64_t>& ListAt(const std::vector<std::vector<int64_t>>& lists, size_t i) {
  static const std::vector<int64_t> kNone;
  return i < lists.size() ? lists[i] : kNone;
}

/// Summarize(h), with the exact percentiles in place of the bucket edges when given.
stats::Summary SummaryOf(const Histogram& h, const ExactValues& exact) {
  stats::Summary s = stats::Summarize(h);
  if (exact) std::copy(exact->begin(), exact->end(), s.percentile_ns.begin());
  return s;
}

/// The percentile statement of a whole run: exact when the samples log gave every path's
/// percentiles (per period too, where shown), the bucket-edge statement when it gave none,
/// and which is which otherwise.
std::string RunMethodStatement(const LatencyRun& run) {
  std::vector<std::string> exact;
  std::vector<std::string> wake_up_only;
  for (const auto& path : run.paths) {
    if (!path.exact || !ExactList(path, path.exact->all)) continue;
    if (PathHasPerPeriod(path) && path.exact->all_per_period.empty()) {
      wake_up_only.push_back(path.wake);
    } else {
      exact.push_back(path.wake);
    }
  }
  if (exact.empty() && wake_up_only.empty()) return std::string(stats::kPercentileMethod);
  if (exact.size() == run.paths.size()) return std::string(stats::kExactPercentileMethod);
  std::string out = std::string(stats::kExactPercentileMethod);
  if (!exact.empty()) out += fmt::format(" for wake path {}", fmt::join(exact, ", "));
  if (!wake_up_only.empty()) {
    out += fmt::format("{} per wake-up only for wake path {}", exact.empty() ? "" : ";",
                       fmt::join(wake_up_only, ", "));
  }
  return out + fmt::format("; the others: {}", stats::kPercentileMethod);
}

/// `percentile_method` of a path's stats block: written only where the log made them exact,
/// so files without a samples log keep their layout (the run's own statement says the rest).
nlohmann::json SummaryJson(const Histogram& h, const ExactValues& exact = std::nullopt) {
  const stats::Summary s = SummaryOf(h, exact);
  nlohmann::json j;
  j["count"] = s.count;
  j["min_ns"] = s.min_ns;
  j["max_ns"] = s.max_ns;
  j["mean_ns"] = s.mean_ns;
  j["stddev_ns"] = s.stddev_ns;
  for (size_t i = 0; i < stats::kPercentiles.size(); ++i) {
    j[std::string(stats::PercentileLabel(stats::kPercentiles[i])) + "_ns"] = s.percentile_ns[i];
  }
  j["negative_latencies"] = s.negative;
  j["top_bucket_count"] = s.top_bucket;
  if (exact) j["percentile_method"] = "exact";
  return j;
}

/// `bounds` (every statistic's kind), `bounds_reasons` and one `<stat>_is_<kind>` flag per
/// inexact statistic, added to a stats object when something is not exact.
void AddBounds(nlohmann::json& stats, const StatBounds& b) {
  if (!b.Any()) return;
  const std::pair<const char*, Bound> rows[] = {
      {"min", b.min}, {"max", b.max}, {"mean", b.mean}, {"stddev", b.stddev}};
  nlohmann::json kinds = nlohmann::json::object();
  for (const auto& [name, bound] : rows) {
    kinds[std::string(name) + "_ns"] = BoundName(bound);
    if (bound != Bound::kExact) stats[fmt::format("{}_is_{}", name, BoundName(bound))] = true;
  }
  if (b.percentiles_lower_from_ns)
    kinds["percentiles_lower_bound_from_ns"] = *b.percentiles_lower_from_ns;
  if (b.percentiles_upper_to_ns)
    kinds["percentiles_upper_bound_to_ns"] = *b.percentiles_upper_to_ns;
  if (b.percentiles_unknown) {
    kinds["percentiles"] = "unknown";
    // Samples of unknown sign are counted with the negatives: at most that many are.
    kinds["negative_latencies"] = "upper_bound";
  }
  stats["bounds"] = kinds;
  stats["bounds_reasons"] = b.reasons;
}

}  // namespace

std::string FormatStatusLine(const StatusLine& l, bool nsecs) {
  if (nsecs) {
    std::string line = fmt::format(
        "T:{:2d} ({:5d}) P:{:2d} I:{} C:{:7d} Min:{:7d} Act:{:8d} Avg:{:8d} Max:{:8d}", l.index,
        l.tid, l.priority, l.interval_us, l.cycles, l.min, l.act, l.avg, l.max);
    if (l.smi) line += fmt::format(" SMI:{:8d}", *l.smi);
    return line;
  }
  std::string line =
      fmt::format("T:{:2d} ({:5d}) P:{:2d} I:{} C:{:7d} Min:{:7d} Act:{:5d} Avg:{:5d} Max:{:8d}",
                  l.index, l.tid, l.priority, l.interval_us, l.cycles, l.min, l.act, l.avg, l.max);
  if (l.smi) line += fmt::format(" SMI:{:8d}", *l.smi);  // cyclictest --smi
  return line;
}

std::string CurrentStatusBlock(const std::vector<std::string>& lines) {
  std::string text = "#---------------------------\n# cyclictest current status:\n";
  for (const auto& line : lines) text += line + "\n";
  text += "#---------------------------\n";
  return text;
}

StatusLine StatusOf(const ProbeResult& p, bool nsecs) {
  StatusLine l;
  l.index = p.index;
  l.tid = p.tid;
  l.priority = p.priority;
  l.interval_us = p.interval_ns / kNsPerUs;
  l.cycles = p.histogram.count();
  l.min = ToUnit(p.histogram.min(), nsecs);
  l.act = ToUnit(p.last_latency_ns, nsecs);
  l.avg = IntegerAverage(p.histogram, nsecs);
  l.max = ToUnit(p.histogram.max(), nsecs);
  l.smi = p.smi_count;
  return l;
}

std::string FormatStatusLineWithTail(const StatusLine& line, bool nsecs, int64_t p99,
                                     uint64_t missed) {
  return fmt::format("{} P99:{:8d} Miss:{}", FormatStatusLine(line, nsecs), p99, missed);
}

std::string FinalStatusLine(const ProbeResult& probe, bool nsecs,
                            std::optional<int64_t> exact_p99_ns) {
  int64_t p99 = probe.histogram.count() == 0 ? 0 : probe.histogram.Percentile(99.0);
  if (exact_p99_ns && probe.histogram.count() > 0) p99 = *exact_p99_ns;
  return FormatStatusLineWithTail(StatusOf(probe, nsecs), nsecs, ToUnit(p99, nsecs),
                                  probe.missed_activations);
}

std::optional<int64_t> ExactP99(const PathRun& path, size_t index) {
  if (!path.exact || index >= path.exact->threads.size()) return std::nullopt;
  constexpr double kP99[] = {99.0};
  auto v = PickPercentiles(*path.exact, path.exact->threads[index], kP99);
  if (!v) return std::nullopt;
  return v->front();
}

std::string FormatInjectionLine(const ProbeResult& probe, const InjectSettings& inject) {
  const uint64_t detected = InjectionsDetected(probe, inject);
  std::string line =
      fmt::format("# injected {}, detected {} (>= {}) on T{}", probe.injections, detected,
                  HumanNs(static_cast<double>(inject.threshold_ns)), probe.index);
  const std::optional<uint64_t> on_deadline = InjectionsOnDeadline(probe, inject);
  if (!on_deadline) return line;
  // Apart: those on an injection's deadline (the ground truth found) and the other stalls.
  const uint64_t found = *on_deadline;
  line += fmt::format(": {} on injected deadlines ({}), {} elsewhere", found,
                      found >= probe.injections
                          ? std::string("every injection seen")
                          : fmt::format("{} injection(s) not seen", probe.injections - found),
                      detected - found);
  return line;
}

std::string FormatHistogramBlock(const PathRun& path, bool with_sum, bool nsecs) {
  const auto& probes = path.probes;
  if (probes.empty() || !probes.front().linear) return "";
  const int64_t limit = probes.front().linear->limit_us;
  const bool sum_column = with_sum && probes.size() > 1;
  std::string out = "# Histogram\n";
  for (int64_t us = 0; us < limit; ++us) {
    out += fmt::format("{:06d} ", us);
    uint64_t row_sum = 0;
    for (size_t t = 0; t < probes.size(); ++t) {
      const uint64_t c = probes[t].linear->counts[static_cast<size_t>(us)];
      row_sum += c;
      out += fmt::format("{}{:06d}", t == 0 ? "" : "\t", c);
    }
    if (sum_column) out += fmt::format("\t{:06d}", row_sum);
    out += '\n';
  }
  out += "# Total:";
  uint64_t all = 0;
  for (const auto& p : probes) {
    uint64_t total = 0;
    for (uint64_t c : p.linear->counts) total += c;
    all += total;
    out += fmt::format(" {:09d}", total);
  }
  if (sum_column) out += fmt::format(" {:09d}", all);
  out += "\n# Min Latencies:";
  for (const auto& p : probes) out += fmt::format(" {:05d}", ToUnit(p.histogram.min(), nsecs));
  out += "\n# Avg Latencies:";
  for (const auto& p : probes) out += fmt::format(" {:05d}", IntegerAverage(p.histogram, nsecs));
  out += "\n# Max Latencies:";
  int64_t max_max = 0;
  for (const auto& p : probes) {
    out += fmt::format(" {:05d}", ToUnit(p.histogram.max(), nsecs));
    max_max = std::max(max_max, ToUnit(p.histogram.max(), nsecs));
  }
  if (sum_column) out += fmt::format(" {:05d}", max_max);
  out += "\n# Histogram Overflows:";
  uint64_t all_overflows = 0;
  for (const auto& p : probes) {
    out += fmt::format(" {:05d}", p.linear->overflows);
    all_overflows += p.linear->overflows;
  }
  if (sum_column) out += fmt::format(" {:05d}", all_overflows);
  out += "\n# Histogram Overflow at cycle number:\n";
  for (const auto& p : probes) {
    out += fmt::format("# Thread {}:", p.index);
    for (uint64_t seq : p.linear->overflow_seqs) out += fmt::format(" {:05d}", seq);
    if (p.linear->overflow_seqs_dropped > 0) {
      out += fmt::format(" # {:05d} others", p.linear->overflow_seqs_dropped);
    }
    out += '\n';
  }
  if (probes.front().smi_count) {  // cyclictest --smi's line
    out += "# SMIs:";
    for (const auto& p : probes) out += fmt::format(" {:05d}", p.smi_count.value_or(0));
    out += '\n';
  }
  for (const auto& p : probes) {
    if (p.linear->underflows > 0) {
      out += fmt::format(
          "# rtpulse: thread {}: {} negative latencies (woke before the deadline), not in the "
          "rows above\n",
          p.index, p.linear->underflows);
    }
  }
  out += '\n';
  return out;
}

nlohmann::json HistogramToJson(const Histogram& histogram) {
  nlohmann::json buckets = nlohmann::json::array();
  histogram.ForEachBucket([&](Histogram::Range r, uint64_t count) {
    buckets.push_back({r.lo, r.hi, count});
  });
  return buckets;
}

namespace {

/// Thread `pi` of `path`: cyclictest's fields (us, or ns with --nsecs) and rtpulse's beside.
nlohmann::json ThreadJson(const LatencyRun& run, const PathRun& path,
                          const ExactPathPercentiles& exact, size_t pi, bool nsecs) {
  const ProbeResult& p = path.probes[pi];
  nlohmann::json t;
  nlohmann::json hist = nlohmann::json::object();
  if (p.linear) {
    for (size_t us = 0; us < p.linear->counts.size(); ++us) {
      if (p.linear->counts[us] != 0) hist[std::to_string(us)] = p.linear->counts[us];
    }
  }
  t["histogram"] = hist;
  t["cycles"] = p.histogram.count();
  t["min"] = ToUnit(p.histogram.min(), nsecs);
  t["max"] = ToUnit(p.histogram.max(), nsecs);
  t["avg"] = std::round(p.histogram.Mean() / (nsecs ? 1.0 : 1000.0) * 100.0) / 100.0;
  t["cpu"] = p.cpu;
  t["node"] = -1;
  // rtpulse's fields, beside cyclictest's.
  t["thread_index"] = p.index;
  t["wake"] = p.wake;
  t["policy"] = p.policy;
  t["priority"] = p.priority;
  t["interval_ns"] = p.interval_ns;
  t["tid"] = p.tid;
  t["stats"] = SummaryJson(p.histogram, ExactList(path, ListAt(exact.threads, pi)));
  AddBounds(t["stats"], p.bounds);
  if (p.latencies_not_printed > 0) t["latencies_not_printed"] = p.latencies_not_printed;
  t["periods_elapsed"] = p.periods_elapsed;
  t["missed_activations"] =
      p.misses_not_counted ? nlohmann::json(nullptr) : nlohmann::json(p.missed_activations);
  t["skipped_periods"] =
      p.misses_not_counted ? nlohmann::json(nullptr) : nlohmann::json(p.skipped_periods);
  AddMissesUnknown(t, p.misses_unknown);
  t["grid_restarts"] = p.grid_restarts;
  t["samples_logged"] = p.samples_logged;
  t["samples_dropped"] = p.samples_dropped;
  t["injections"] = p.injections;
  if (p.smi_count) t["smi_count"] = *p.smi_count;
  if (run.inject) {
    const uint64_t detected = InjectionsDetected(p, *run.inject);
    t["injections_detected"] = detected;
    if (const auto found = InjectionsOnDeadline(p, *run.inject)) {
      t["injections_detected_on_deadline"] = *found;
      t["detected_elsewhere"] = detected - *found;
    }
  }
  t["degraded"] = p.degraded;
  t["notes"] = p.notes;
  if (p.linear) {
    t["histogram_overflows"] = p.linear->overflows;
    t["histogram_underflows"] = p.linear->underflows;
  }
  nlohmann::json spikes = nlohmann::json::array();
  for (const auto& s : p.spikes) spikes.push_back({{"seq", s.seq}, {"latency_ns", s.latency_ns}});
  t["spikes"] = spikes;
  t["spikes_not_kept"] = p.spikes_not_kept;
  t["histogram_log"] = HistogramToJson(p.histogram);
  if (HasPerPeriod(p) && !p.bounds.Any()) {
    // Beside the per-wake-up (cyclictest) statistics: one entry per period, each skipped
    // period with its own lateness (docs/latency-json.md#per-period).
    t["per_period"] = {
        {"periods", p.histogram.count() + p.skipped_histogram.count()},
        {"skipped_periods", p.skipped_histogram.count()},
        {"stats",
         SummaryJson(PerPeriodHistogram(p), ExactList(path, ListAt(exact.threads_per_period, pi)))},
        {"skipped_stats", SummaryJson(p.skipped_histogram)},
        {"skipped_histogram_log", HistogramToJson(p.skipped_histogram)}};
  }
  return t;
}

/// The path's threads together: merged statistics, misses (null when not counted) and the
/// per-period view.
nlohmann::json AllThreadsJson(const PathRun& path, const ExactPathPercentiles& exact,
                              uint64_t missed, uint64_t skipped) {
  nlohmann::json all = SummaryJson(MergedHistogram(path), ExactList(path, exact.all));
  AddBounds(all, MergeBounds(path.probes));
  const bool not_counted = std::any_of(path.probes.begin(), path.probes.end(),
                                       [](const ProbeResult& q) { return q.misses_not_counted; });
  all["missed_activations"] = not_counted ? nlohmann::json(nullptr) : nlohmann::json(missed);
  all["skipped_periods"] = not_counted ? nlohmann::json(nullptr) : nlohmann::json(skipped);
  uint64_t unknown = 0;
  for (const ProbeResult& q : path.probes) unknown += q.misses_unknown;
  AddMissesUnknown(all, unknown);
  if (PathHasPerPeriod(path)) {
    all["per_period"] =
        SummaryJson(MergedPerPeriodHistogram(path), ExactList(path, exact.all_per_period));
  }
  if (!exact.per_period_note.empty()) {
    all["per_period_percentiles_not_exact"] = exact.per_period_note;
  }
  return all;
}

/// The "rtpulse" block: what cyclictest's format has no field for.
nlohmann::json RtpulseBlock(const LatencyRun& run, bool nsecs, nlohmann::json paths) {
  nlohmann::json r;
  r["schema"] = "rtpulse-latency";
  r["schema_version"] = 1;
  r["version"] = run.rtpulse_version;
  r["interrupted"] = run.interrupted;
  r["degraded"] = run.degraded;
  r["warnings"] = run.warnings;
  r["preemption_model"] = run.preemption_model;
  r["hypervisor"] = run.hypervisor;
  r["dma_latency"] = run.dma_latency;
  if (!run.idle_states.empty()) r["idle_states"] = run.idle_states;
  if (!run.samples_error.empty()) r["samples_error"] = run.samples_error;
  r["units"] = {{"cyclictest_fields", nsecs ? "ns" : "us"}, {"rtpulse_fields", "ns"}};
  r["percentile_method"] = RunMethodStatement(run);
  r["histogram"] = {{"kind", "log-linear"},
                    {"sub_bucket_bits", Histogram::kSubBucketBits},
                    {"exact_below_ns", Histogram::kSubBuckets},
                    {"max_relative_error", Histogram::kMaxRelativeError},
                    {"top_bucket_from_ns", int64_t{1} << Histogram::kTopExponent}};
  r["paths"] = std::move(paths);
  if (run.inject) {
    r["inject"] = {{"delay_ns", run.inject->delay_ns},
                   {"rate_hz", run.inject->rate_hz},
                   {"detect_threshold_ns", run.inject->threshold_ns}};
  }
  if (run.breaktrace) {
    r["breaktrace"] = {{"thread", run.breaktrace->thread},
                       {"seq", run.breaktrace->seq},
                       {"latency_ns", run.breaktrace->latency_ns},
                       {"tracing_stopped", run.breaktrace->tracing_stopped}};
  }
  if (run.explain) r["explain"] = ExplainToJson(*run.explain);
  return r;
}

}  // namespace

nlohmann::json ToJson(const LatencyRun& run, bool nsecs) {
  nlohmann::json j;
  j["file_version"] = 1;
  j["cmdline:"] = run.cmdline;  // cyclictest's key, colon included
  j["rt_test_version:"] = "rtpulse " + run.rtpulse_version;
  j["start_time"] = RfcTime(run.start_realtime_ns);
  j["end_time"] = RfcTime(run.end_realtime_ns);
  j["return_code"] = run.return_code;
  j["sysinfo"] = {{"sysname", run.sysname}, {"nodename", run.nodename},
                  {"release", run.release}, {"version", run.version},
                  {"machine", run.machine}, {"realtime", run.preempt_rt ? 1 : 0}};
  size_t num_threads = 0;
  nlohmann::json threads = nlohmann::json::object();
  nlohmann::json paths = nlohmann::json::array();
  for (const auto& path : run.paths) {
    nlohmann::json path_json;
    path_json["wake"] = path.wake;
    path_json["duration_ns"] = path.duration_ns;
    path_json["threads"] = nlohmann::json::array();
    uint64_t missed = 0;
    uint64_t skipped = 0;
    const ExactPathPercentiles none;
    const ExactPathPercentiles& exact = path.exact ? *path.exact : none;
    for (size_t pi = 0; pi < path.probes.size(); ++pi) {
      missed += path.probes[pi].missed_activations;
      skipped += path.probes[pi].skipped_periods;
      path_json["threads"].push_back(num_threads);
      threads[std::to_string(num_threads++)] = ThreadJson(run, path, exact, pi, nsecs);
    }
    path_json["all_threads"] = AllThreadsJson(path, exact, missed, skipped);
    paths.push_back(std::move(path_json));
  }
  j["num_threads"] = num_threads;
  j["resolution_in_ns"] = nsecs ? 1 : 0;
  j["thread"] = threads;
  j["rtpulse"] = RtpulseBlock(run, nsecs, std::move(paths));
  return j;
}

int64_t InjectDetectionThreshold(int64_t delay_ns) {
  const int64_t three_quarters = std::max<int64_t>(1, delay_ns / 4 * 3 + delay_ns % 4 * 3 / 4);
  return Histogram::MagnitudeRange(Histogram::IndexOf(static_cast<uint64_t>(three_quarters))).lo;
}

uint64_t InjectionsDetected(const ProbeResult& probe, const InjectSettings& inject) {
  return probe.histogram.CountAtOrAbove(inject.threshold_ns);
}

std::optional<uint64_t> InjectionsOnDeadline(const ProbeResult& probe,
                                             const InjectSettings& inject) {
  if (!probe.injected_histogram) return std::nullopt;
  return probe.injected_histogram->CountAtOrAbove(inject.threshold_ns);
}

std::string HumanNs(double ns) {
  const double a = std::fabs(ns);
  if (a < 1e3) return fmt::format("{:.0f} ns", ns);
  if (a < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (a < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

std::string FormatSummary(const LatencyRun& run) {
  std::string out;
  bool not_counted = false;  // the path's misses (no deadline): "not counted", never 0/0
  auto row = [&](const std::string& name, const Histogram& h, uint64_t missed, uint64_t skipped,
                 uint64_t unknown, const ExactValues& exact) {
    const stats::Summary s = SummaryOf(h, exact);
    const std::string misses =
        not_counted
            ? std::string("not counted")
            : fmt::format("{:>7}/{}", WithBound(std::to_string(missed), MissesBound(unknown), ">="),
                          skipped);
    out += fmt::format(
        "{:<10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {}\n", name, s.count,
        HumanNs(static_cast<double>(s.min_ns)), HumanNs(static_cast<double>(s.percentile_ns[0])),
        HumanNs(static_cast<double>(s.percentile_ns[2])),
        HumanNs(static_cast<double>(s.percentile_ns[3])),
        HumanNs(static_cast<double>(s.percentile_ns[4])), HumanNs(static_cast<double>(s.max_ns)),
        HumanNs(s.mean_ns), HumanNs(s.stddev_ns), misses);
  };
  for (const auto& path : run.paths) {
    not_counted = std::any_of(path.probes.begin(), path.probes.end(),
                              [](const ProbeResult& q) { return q.misses_not_counted; });
    out += fmt::format("wake path: {}\n", path.wake);
    out += "per wake-up (cyclictest): one sample per wake-up\n";
    out += fmt::format("{:<10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}\n",
                       "thread", "samples", "min", "p50", "p99", "p99.9", "p99.99", "max", "mean",
                       "stddev", "missed/skipped");
    Histogram all;
    uint64_t missed = 0;
    uint64_t skipped = 0;
    uint64_t unknown = 0;
    const ExactPathPercentiles none;
    const ExactPathPercentiles& exact = path.exact ? *path.exact : none;
    for (size_t pi = 0; pi < path.probes.size(); ++pi) {
      const ProbeResult& p = path.probes[pi];
      const std::string name =
          p.cpu >= 0 ? fmt::format("T{} cpu{}", p.index, p.cpu) : fmt::format("T{}", p.index);
      row(name, p.histogram, p.missed_activations, p.skipped_periods, p.misses_unknown,
          ExactList(path, ListAt(exact.threads, pi)));
      all.Merge(p.histogram);
      missed += p.missed_activations;
      skipped += p.skipped_periods;
      unknown += p.misses_unknown;
    }
    if (path.probes.size() > 1) {
      row("all", all, missed, skipped, unknown, ExactList(path, exact.all));
    }
    if (PathHasPerPeriod(path)) {
      // The same columns, one entry per period: a stall of k periods weighs k + 1 times.
      out += "per period: every period, each skipped one late from its deadline to the wake-up\n";
      out += fmt::format("{:<10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}\n",
                         "thread", "periods", "min", "p50", "p99", "p99.9", "p99.99", "max", "mean",
                         "stddev", "missed/skipped");
      for (size_t pi = 0; pi < path.probes.size(); ++pi) {
        const ProbeResult& p = path.probes[pi];
        const std::string name =
            p.cpu >= 0 ? fmt::format("T{} cpu{}", p.index, p.cpu) : fmt::format("T{}", p.index);
        row(name, PerPeriodHistogram(p), p.missed_activations, p.skipped_periods, p.misses_unknown,
            ExactList(path, ListAt(exact.threads_per_period, pi)));
      }
      if (path.probes.size() > 1) {
        row("all", MergedPerPeriodHistogram(path), missed, skipped, unknown,
            ExactList(path, exact.all_per_period));
      }
      if (!exact.per_period_note.empty()) {
        out += fmt::format("per period percentiles: bucket edges, not exact: {}\n",
                           exact.per_period_note);
      }
    } else if (std::all_of(path.probes.begin(), path.probes.end(),
                           [](const ProbeResult& q) { return q.interval_ns <= 0; })) {
      out += "per period: none (no period: the run was not periodic)\n";
    } else {
      out += "per period: unknown (the skipped periods' latencies are not in this result)\n";
    }
    out += '\n';
  }
  if (run.paths.size() > 1) {
    out += "side by side (all threads):\n";
    out += fmt::format("{:<10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "wake", "samples", "p50",
                       "p99", "p99.9", "max", "missed");
    for (const auto& path : run.paths) {
      const Histogram all = MergedHistogram(path);
      const stats::Summary s =
          SummaryOf(all, path.exact ? ExactList(path, path.exact->all) : std::nullopt);
      uint64_t missed = 0;
      for (const auto& p : path.probes) missed += p.missed_activations;
      out += fmt::format("{:<10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}\n", path.wake, s.count,
                         HumanNs(static_cast<double>(s.percentile_ns[0])),
                         HumanNs(static_cast<double>(s.percentile_ns[2])),
                         HumanNs(static_cast<double>(s.percentile_ns[3])),
                         HumanNs(static_cast<double>(s.max_ns)), missed);
    }
    out += '\n';
  }
  out += fmt::format("percentiles: {}\n", RunMethodStatement(run));
  out += "missed = wake-ups after the next deadline; skipped = periods with no wake-up\n";
  for (const auto& w : run.warnings) out += fmt::format("warning: {}\n", w);
  if (run.interrupted) out += "note: interrupted; these results cover the time that ran\n";
  return out;
}

std::string CommentedLines(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? end : end - start);
    out += line.empty() ? "#\n" : "# " + line + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

void AddMissesUnknown(nlohmann::json& j, uint64_t unknown) {
  if (unknown == 0) return;
  j["misses_unknown"] = unknown;
  j["missed_activations_is_lower_bound"] = true;
}

std::string MissedSkippedText(uint64_t missed, uint64_t skipped, uint64_t unknown,
                              bool not_counted) {
  if (not_counted) return "not counted";
  return WithBound(std::to_string(missed), MissesBound(unknown), ">=") + "/" +
         std::to_string(skipped);
}

}  // namespace rtpulse::results
