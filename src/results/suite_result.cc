#include "results/suite_result.h"

#include <fmt/format.h>

#include <cmath>

#include "core/histogram.h"
#include "core/timestamp.h"
#include "results/budget_verdict.h"
#include "results/cyclictest_format.h"
#include "stats/summary.h"

namespace rtpulse::results {
namespace {

double Us(double ns) {
  return ns / 1000.0;
}

nlohmann::json StatsJsonExact(const ScenarioStats& s);

/// A statistic's value for JSON: null when it cannot be known.
nlohmann::json Value(double v, Bound bound) {
  if (bound == Bound::kUnknown) return nullptr;
  return v;
}
nlohmann::json Value(int64_t v, Bound bound) {
  if (bound == Bound::kUnknown) return nullptr;
  return v;
}

/// "≥ 12.3" for a lower bound, "≤ 12.3" for an upper bound, "?" when unknown (us).
std::string UsText(double ns, Bound bound) {
  return WithBound(fmt::format("{:.1f}", Us(ns)), bound);
}

std::string PercentileText(int64_t ns, const StatBounds& bounds) {
  return UsText(static_cast<double>(ns), bounds.Percentile(ns));
}

nlohmann::json PerPeriodJson(const PerPeriodStats& s) {
  return {{"periods", s.periods},
          {"min_ns", s.min_ns},
          {"mean_ns", s.mean_ns},
          {"median_ns", s.median_ns},
          {"p95_ns", s.p95_ns},
          {"p99_ns", s.p99_ns},
          {"p99.9_ns", s.p999_ns},
          {"p99.99_ns", s.p9999_ns},
          {"max_ns", s.max_ns},
          {"jitter_stddev_ns", s.stddev_ns},
          {"percentile_method", s.percentiles_exact ? "exact" : "bucket_upper_edge"}};
}

nlohmann::json ExactJson(const ExactPercentileValues& e) {
  return {{"median_ns", e.median_ns},
          {"p95_ns", e.p95_ns},
          {"p99_ns", e.p99_ns},
          {"p99.9_ns", e.p999_ns},
          {"p99.99_ns", e.p9999_ns}};
}

/// The statement for rows named `names`, of which `exact` are exact samples.
std::string Statement(const std::vector<std::string>& names,
                      const std::vector<std::string>& exact) {
  if (exact.empty()) return std::string(stats::kPercentileMethod);
  if (exact.size() == names.size()) return std::string(stats::kExactPercentileMethod);
  return fmt::format("{} for {}; the others: {}", stats::kExactPercentileMethod,
                     fmt::join(exact, ", "), stats::kPercentileMethod);
}

nlohmann::json StatsJson(const ScenarioStats& s) {
  nlohmann::json j = StatsJsonExact(s);
  if (s.per_period) j["per_period"] = PerPeriodJson(*s.per_period);
  AddMissesUnknown(j, s.misses_unknown);
  if (s.bounds.Any()) {
    j["min_ns"] = Value(s.min_ns, s.bounds.min);
    j["max_ns"] = Value(s.max_ns, s.bounds.max);
    j["mean_ns"] = Value(s.mean_ns, s.bounds.mean);
    j["jitter_stddev_ns"] = Value(s.stddev_ns, s.bounds.stddev);
    const std::pair<const char*, Bound> rows[] = {{"min", s.bounds.min},
                                                  {"max", s.bounds.max},
                                                  {"mean", s.bounds.mean},
                                                  {"jitter_stddev", s.bounds.stddev}};
    nlohmann::json kinds = nlohmann::json::object();
    for (const auto& [name, bound] : rows) {
      kinds[std::string(name) + "_ns"] = BoundName(bound);
      if (bound != Bound::kExact) j[fmt::format("{}_is_{}", name, BoundName(bound))] = true;
    }
    const std::pair<const char*, int64_t> percentiles[] = {{"median", s.median_ns},
                                                           {"p95", s.p95_ns},
                                                           {"p99", s.p99_ns},
                                                           {"p99.9", s.p999_ns},
                                                           {"p99.99", s.p9999_ns}};
    for (const auto& [name, value] : percentiles) {
      const Bound bound = s.bounds.Percentile(value);
      kinds[std::string(name) + "_ns"] = BoundName(bound);
      j[std::string(name) + "_ns"] = Value(value, bound);
      if (bound != Bound::kExact) j[fmt::format("{}_is_{}", name, BoundName(bound))] = true;
    }
    j["bounds"] = kinds;
    j["bounds_reasons"] = s.bounds.reasons;
  }
  if (s.latencies_not_printed > 0) j["latencies_not_printed"] = s.latencies_not_printed;
  return j;
}

nlohmann::json StatsJsonExact(const ScenarioStats& s) {
  return {{"scenario", s.scenario},
          {"wake", s.wake},
          {"status", s.status},
          {"samples", s.samples},
          {"min_ns", s.min_ns},
          {"mean_ns", s.mean_ns},
          {"median_ns", s.median_ns},
          {"p95_ns", s.p95_ns},
          {"p99_ns", s.p99_ns},
          {"p99.9_ns", s.p999_ns},
          {"p99.99_ns", s.p9999_ns},
          {"max_ns", s.max_ns},
          {"percentile_method", s.percentiles_exact ? "exact" : "bucket_upper_edge"},
          {"jitter_stddev_ns", s.stddev_ns},
          {"missed_activations",
           s.misses_not_counted ? nlohmann::json(nullptr) : nlohmann::json(s.missed_activations)},
          {"skipped_periods",
           s.misses_not_counted ? nlohmann::json(nullptr) : nlohmann::json(s.skipped_periods)},
          {"periods_elapsed", s.periods_elapsed}};
}

/// When the threads' means are only bounds, the spread between them is unknown, but the
/// pooled variance is at least the threads' own variances pooled (the between-thread part is
/// >= 0): a lower bound that still says something.
void PooledJitterBound(const std::vector<ProbeResult>& probes, ScenarioStats& row) {
  if (probes.size() < 2 || row.bounds.stddev != Bound::kUnknown || row.samples == 0) return;
  double within = 0;
  for (const auto& p : probes) {
    if (p.bounds.stddev == Bound::kUnknown || p.bounds.stddev == Bound::kUpperBound) return;
    const double sd = p.histogram.StdDev();
    within += static_cast<double>(p.histogram.count()) * sd * sd;
  }
  row.stddev_ns = std::sqrt(within / static_cast<double>(row.samples));
  row.bounds.stddev = Bound::kLowerBound;
  row.bounds.reasons.push_back(
      "the jitter of all threads together is their own spreads pooled, without the spread "
      "between their means (those are bounds): a lower bound");
}

/// All threads' periods together, each skipped period with its own lateness; none when a
/// thread's per-period latencies are not known.
std::optional<PerPeriodStats> SummarizePerPeriod(
    const PathRun& path, const std::optional<ExactPercentileValues>& exact) {
  if (path.probes.empty()) return std::nullopt;
  Histogram all;
  for (const auto& p : path.probes) {
    if (!HasPerPeriod(p) || p.bounds.Any()) return std::nullopt;
    all.Merge(p.histogram);
    all.Merge(p.skipped_histogram);
  }
  const stats::Summary s = stats::Summarize(all);
  PerPeriodStats out;
  out.periods = s.count;
  out.min_ns = s.min_ns;
  out.mean_ns = s.mean_ns;
  out.stddev_ns = s.stddev_ns;
  out.max_ns = s.max_ns;
  if (exact) {
    out.percentiles_exact = true;
    out.median_ns = exact->median_ns;
    out.p95_ns = exact->p95_ns;
    out.p99_ns = exact->p99_ns;
    out.p999_ns = exact->p999_ns;
    out.p9999_ns = exact->p9999_ns;
    return out;
  }
  out.median_ns = all.Percentile(50.0);
  out.p95_ns = all.Percentile(95.0);
  out.p99_ns = all.Percentile(99.0);
  out.p999_ns = all.Percentile(99.9);
  out.p9999_ns = all.Percentile(99.99);
  return out;
}

/// One row per wake path of a scenario that has measurements.
std::vector<ScenarioStats> SummarizeScenario(const ScenarioResult& scenario) {
  std::vector<ScenarioStats> rows;
  if (!scenario.latency) return rows;
  for (const auto& path : scenario.latency->paths) {
    Histogram all;
    ScenarioStats row;
    row.scenario = scenario.name;
    row.wake = path.wake;
    row.status = ScenarioStatusName(scenario.status);
    for (const auto& p : path.probes) {
      all.Merge(p.histogram);
      row.missed_activations += p.missed_activations;
      row.skipped_periods += p.skipped_periods;
      row.misses_not_counted |= p.misses_not_counted;
      row.misses_unknown += p.misses_unknown;
      row.periods_elapsed += p.periods_elapsed;
      row.latencies_not_printed += p.latencies_not_printed;
    }
    row.bounds = MergeBounds(path.probes);
    const stats::Summary s = stats::Summarize(all);
    row.samples = s.count;
    row.min_ns = s.min_ns;
    row.mean_ns = s.mean_ns;
    row.stddev_ns = s.stddev_ns;
    row.max_ns = s.max_ns;
    PooledJitterBound(path.probes, row);
    if (scenario.exact_percentiles && scenario.latency->paths.size() == 1) {
      const ExactPercentileValues& e = *scenario.exact_percentiles;
      row.percentiles_exact = true;
      row.median_ns = e.median_ns;
      row.p95_ns = e.p95_ns;
      row.p99_ns = e.p99_ns;
      row.p999_ns = e.p999_ns;
      row.p9999_ns = e.p9999_ns;
    } else {
      row.median_ns = all.Percentile(50.0);
      row.p95_ns = all.Percentile(95.0);
      row.p99_ns = all.Percentile(99.0);
      row.p999_ns = all.Percentile(99.9);
      row.p9999_ns = all.Percentile(99.99);
    }
    const bool one_path = scenario.latency->paths.size() == 1;
    row.per_period =
        SummarizePerPeriod(path, one_path ? scenario.exact_per_period_percentiles : std::nullopt);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::string MethodStatement(const std::vector<ScenarioStats>& rows) {
  std::vector<std::string> names;
  std::vector<std::string> exact;
  for (const auto& r : rows) {
    names.push_back(r.scenario);
    if (r.percentiles_exact) exact.push_back(r.scenario);
  }
  return Statement(names, exact);
}

std::string PerPeriodMethodStatement(const std::vector<ScenarioStats>& rows) {
  std::vector<std::string> names;
  std::vector<std::string> exact;
  for (const auto& r : rows) {
    if (!r.per_period) continue;
    names.push_back(r.scenario);
    if (r.per_period->percentiles_exact) exact.push_back(r.scenario);
  }
  if (names.empty()) return "unknown (no per-period statistics)";
  return Statement(names, exact);
}

const char* ScenarioStatusName(ScenarioStatus status) {
  switch (status) {
    case ScenarioStatus::kPending:
      return "pending";
    case ScenarioStatus::kSettling:
      return "settling";
    case ScenarioStatus::kMeasuring:
      return "measuring";
    case ScenarioStatus::kComplete:
      return "complete";
    case ScenarioStatus::kInterrupted:
      return "interrupted";
    case ScenarioStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

std::vector<ScenarioStats> SummarizeScenarios(const SuiteResult& suite) {
  std::vector<ScenarioStats> rows;
  for (const auto& scenario : suite.scenarios) {
    for (auto& row : SummarizeScenario(scenario)) rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json ToJson(const SuiteResult& suite) {
  nlohmann::json j;
  j["schema"] = kSuiteSchema;
  j["schema_version"] = kSuiteSchemaVersion;
  j["rtpulse_version"] = suite.rtpulse_version;
  j["cmdline"] = suite.cmdline;
  j["status"] = suite.status;
  j["start_time"] = UtcIsoSeconds(suite.start_realtime_ns);
  j["updated_time"] = UtcIsoSeconds(suite.updated_realtime_ns);
  if (!suite.writer.is_null()) j["writer"] = suite.writer;
  j["config"] = suite.config;
  j["system"] = suite.system;
  j["tuning"] = suite.tuning;
  j["monitor"] = suite.monitor;
  if (!suite.tune_ab.is_null()) j["tune_ab"] = suite.tune_ab;
  j["warnings"] = suite.warnings;
  j["percentile_method"] = MethodStatement(SummarizeScenarios(suite));
  j["per_period_percentile_method"] = PerPeriodMethodStatement(SummarizeScenarios(suite));
  nlohmann::json scenarios = nlohmann::json::array();
  for (const auto& s : suite.scenarios) {
    nlohmann::json o;
    o["name"] = s.name;
    o["description"] = s.description;
    o["loads"] = s.load_specs;
    o["status"] = ScenarioStatusName(s.status);
    if (!s.error.empty()) o["error"] = s.error;
    o["settle_s"] = static_cast<double>(s.settle_ns) / 1e9;
    o["planned_s"] = static_cast<double>(s.planned_ns) / 1e9;
    o["start_time"] = UtcIsoSeconds(s.start_realtime_ns);
    o["end_time"] = UtcIsoSeconds(s.end_realtime_ns);
    o["start_realtime_ns"] = s.start_realtime_ns;
    o["end_realtime_ns"] = s.end_realtime_ns;
    o["load_reports"] = s.loads;
    o["warnings"] = s.warnings;
    o["cpu_busy"] = s.cpu_busy;
    o["samples_file"] = s.samples_file;
    if (s.exact_percentiles) o["exact_percentiles"] = ExactJson(*s.exact_percentiles);
    if (s.exact_per_period_percentiles) {
      o["exact_per_period_percentiles"] = ExactJson(*s.exact_per_period_percentiles);
    }
    // The checkpoint flag says the numbers are a snapshot of a measurement still running
    // when the file was written (a killed run leaves exactly this).
    o["checkpoint"] = s.status == ScenarioStatus::kMeasuring && s.latency.has_value();
    if (s.latency) {
      o["latency"] = results::ToJson(*s.latency, false);
      nlohmann::json summary = nlohmann::json::array();
      for (const auto& row : SummarizeScenario(s)) {
        summary.push_back(StatsJson(row));
      }
      o["summary"] = summary;
    } else {
      o["latency"] = nullptr;
      o["summary"] = nlohmann::json::array();
    }
    scenarios.push_back(std::move(o));
  }
  j["scenarios"] = scenarios;
  j["verdict"] = VerdictJson(JudgeSuite(suite, suite.budget));
  return j;
}

nlohmann::json StatisticalSummaryJson(const SuiteResult& suite) {
  const std::vector<ScenarioStats> summary = SummarizeScenarios(suite);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : summary) rows.push_back(StatsJson(row));
  return {{"schema", "rtpulse.statistical_summary"},
          {"schema_version", 1},
          {"status", suite.status},
          {"units", "ns"},
          {"percentile_method", MethodStatement(summary)},
          {"per_period_percentile_method", PerPeriodMethodStatement(summary)},
          {"jitter", "population standard deviation of the latency"},
          {"scenarios", rows}};
}

std::string FormatStatisticalSummary(const SuiteResult& suite) {
  const auto rows = SummarizeScenarios(suite);
  bool several_paths = false;
  for (const auto& r : rows) several_paths |= r.wake != rows.front().wake;
  std::string out = fmt::format(
      "{:<16} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>14}  {}\n",
      "scenario", "samples", "min", "mean", "median", "p95", "p99", "p99.9", "p99.99", "max",
      "jitter", "missed/skipped", "status");
  for (const auto& r : rows) {
    const std::string name = several_paths ? r.scenario + "/" + r.wake : r.scenario;
    out += fmt::format(
        "{:<16} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>14}  {}\n", name,
        r.samples, UsText(static_cast<double>(r.min_ns), r.bounds.min),
        UsText(r.mean_ns, r.bounds.mean), PercentileText(r.median_ns, r.bounds),
        PercentileText(r.p95_ns, r.bounds), PercentileText(r.p99_ns, r.bounds),
        PercentileText(r.p999_ns, r.bounds), PercentileText(r.p9999_ns, r.bounds),
        UsText(static_cast<double>(r.max_ns), r.bounds.max), UsText(r.stddev_ns, r.bounds.stddev),
        MissedSkippedText(r.missed_activations, r.skipped_periods, r.misses_unknown,
                          r.misses_not_counted),
        r.status);
  }
  bool any_per_period = false;
  for (const auto& r : rows) any_per_period |= r.per_period.has_value();
  if (any_per_period) {
    out +=
        "per period: every period, each skipped one late from its deadline to the wake-up (the "
        "rows above are per wake-up, as cyclictest counts)\n";
    out += fmt::format("{:<16} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8}\n",
                       "scenario", "periods", "min", "mean", "median", "p95", "p99", "p99.9",
                       "p99.99", "max", "jitter");
  }
  for (const auto& r : rows) {
    if (!r.per_period) continue;
    const std::string name = several_paths ? r.scenario + "/" + r.wake : r.scenario;
    const PerPeriodStats& p = *r.per_period;
    auto us = [](double ns) { return fmt::format("{:.1f}", Us(ns)); };
    out += fmt::format("{:<16} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8}\n",
                       name, p.periods, us(static_cast<double>(p.min_ns)), us(p.mean_ns),
                       us(static_cast<double>(p.median_ns)), us(static_cast<double>(p.p95_ns)),
                       us(static_cast<double>(p.p99_ns)), us(static_cast<double>(p.p999_ns)),
                       us(static_cast<double>(p.p9999_ns)), us(static_cast<double>(p.max_ns)),
                       us(p.stddev_ns));
  }
  std::string bound_notes;
  for (const auto& r : rows) {
    const std::string name = several_paths ? r.scenario + "/" + r.wake : r.scenario;
    for (const auto& reason : r.bounds.reasons) {
      bound_notes += fmt::format("  {}: {}\n", name, reason);
    }
    if (r.latencies_not_printed > 0) {
      bound_notes += fmt::format(
          "  {}: {} more samples had a latency <= 0 whose value the file does not give; they are "
          "not in the columns above\n",
          name, r.latencies_not_printed);
    }
  }
  for (const auto& s : suite.scenarios) {
    if (!s.latency) {
      out += fmt::format("{:<16} {:>10}  {}{}\n", s.name, "-", ScenarioStatusName(s.status),
                         s.error.empty() ? "" : ": " + s.error);
    }
  }
  out +=
      "\nlatencies in microseconds, all measuring threads together; jitter = standard "
      "deviation (population)\n";
  out += fmt::format("percentiles: {}\n", MethodStatement(rows));
  if (any_per_period) {
    out += fmt::format("per-period percentiles: {}\n", PerPeriodMethodStatement(rows));
  }
  out += "missed = wake-ups after the next deadline; skipped = periods with no wake-up\n";
  if (!bound_notes.empty()) {
    out +=
        "\u2265 lower bound, \u2264 upper bound, ? unknown: the source file does not give the "
        "exact value:\n" +
        bound_notes;
  }
  // What makes a scenario's numbers doubtful (it was not idle, a load failed) is said beside
  // them, not only in result.json.
  std::string scenario_warnings;
  for (const auto& s : suite.scenarios) {
    for (const auto& w : s.warnings) scenario_warnings += fmt::format("  {}: {}\n", s.name, w);
  }
  if (!scenario_warnings.empty()) out += "warnings:\n" + scenario_warnings;
  if (suite.status != "complete") {
    out += fmt::format("note: suite {}; rows cover what ran\n", suite.status);
  }
  return out;
}

}  // namespace rtpulse::results
