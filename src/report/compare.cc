#include "report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/html_page.h"
#include "results/cyclictest_format.h"

namespace rtpulse::report {
namespace {

using stats::PercentileDifference;

double Us(double ns) {
  return ns / 1000.0;
}

/// Why a scenario's figures may not be what its name says (ScenarioSide::flags).
/// `run_warnings`: the run's own, shown with its context once, not repeated per scenario.
std::vector<std::string> SideFlags(const results::ScenarioResult& scenario,
                                   const std::vector<std::string>& run_warnings) {
  std::vector<std::string> flags;
  if (scenario.status != results::ScenarioStatus::kComplete) {
    flags.push_back(fmt::format("scenario status '{}': measured only in part",
                                results::ScenarioStatusName(scenario.status)));
  }
  if (scenario.latency && scenario.latency->degraded) {
    flags.push_back("degraded: some real-time set-up was refused (its warnings say which)");
  }
  auto add = [&](const std::string& w) {
    if (std::find(flags.begin(), flags.end(), w) == flags.end() &&
        std::find(run_warnings.begin(), run_warnings.end(), w) == run_warnings.end()) {
      flags.push_back(w);
    }
  };
  for (const std::string& w : scenario.warnings) add(w);
  if (scenario.latency) {
    for (const std::string& w : scenario.latency->warnings) add(w);
  }
  return flags;
}

/// Every scenario (one per wake path when a scenario ran several) a run measured, keyed
/// by the name compare matches on.
std::vector<std::pair<std::string, ScenarioSide>> SidesOf(const results::SuiteResult& suite,
                                                          size_t run) {
  std::vector<std::pair<std::string, ScenarioSide>> out;
  for (const auto& scenario : suite.scenarios) {
    if (!scenario.latency) continue;
    const auto& paths = scenario.latency->paths;
    for (const auto& path : paths) {
      ScenarioSide side;
      side.run = run;
      side.wake = path.wake;
      side.status = results::ScenarioStatusName(scenario.status);
      for (const auto& probe : path.probes) {
        side.histogram.Merge(probe.histogram);
        side.missed_activations += probe.missed_activations;
        side.skipped_periods += probe.skipped_periods;
        side.misses_not_counted |= probe.misses_not_counted;
        side.misses_unknown += probe.misses_unknown;
      }
      side.summary = stats::Summarize(side.histogram);
      side.bounds = results::MergeBounds(path.probes);
      bool per_period = !path.probes.empty();
      Histogram periods;
      for (const auto& probe : path.probes) {
        per_period = per_period && results::HasPerPeriod(probe) && !probe.bounds.Any();
        periods.Merge(results::PerPeriodHistogram(probe));
      }
      if (per_period) side.per_period = std::move(periods);
      if (paths.size() == 1) {
        side.exact = scenario.exact_percentiles;
        if (side.per_period) side.exact_per_period = scenario.exact_per_period_percentiles;
      }
      const std::string key = paths.size() > 1 ? scenario.name + "/" + path.wake : scenario.name;
      side.scenario = key;
      side.flags = SideFlags(scenario, suite.warnings);
      out.emplace_back(key, std::move(side));
    }
  }
  return out;
}

std::string ScenarioList(const results::SuiteResult& suite) {
  std::vector<std::string> names;
  for (const auto& s : suite.scenarios) {
    names.push_back(s.latency ? s.name
                              : s.name + " (" + results::ScenarioStatusName(s.status) +
                                    ", nothing measured)");
  }
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

Error NoCommonScenario(const std::vector<CompareRun>& runs) {
  std::string message = "the runs have no scenario in common, nothing to compare:";
  for (const auto& r : runs) {
    message += fmt::format(" {} ({}) has {};", r.label, r.path, ScenarioList(r.suite));
  }
  message.back() = '.';
  return UsageError(message + " Compare runs of the same suite scenarios.");
}

/// Each run's only measured scenario, in run order; nothing unless every run has exactly one.
std::vector<ScenarioSide> OnlyScenarios(const std::vector<CompareRun>& runs) {
  std::vector<ScenarioSide> only;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto sides = SidesOf(runs[i].suite, i);
    if (sides.size() != 1) return {};
    only.push_back(std::move(sides.front().second));
  }
  return only;
}

std::string PairedNote(const std::vector<ScenarioSide>& sides,
                       const std::vector<CompareRun>& runs) {
  std::vector<std::string> parts;
  for (const auto& side : sides) {
    parts.push_back(fmt::format("{} '{}'", runs[side.run].label, side.scenario));
  }
  return fmt::format(
      "scenario names differ, and each run has one scenario, so they are compared with each "
      "other: {}",
      fmt::join(parts, " with "));
}

SideComparison Versus(const ScenarioSide& baseline, const ScenarioSide& other,
                      const stats::BootstrapOptions& bootstrap) {
  SideComparison v;
  v.run = other.run;
  v.differences = stats::BootstrapPercentileDifferences(baseline.histogram, other.histogram,
                                                        kCiPercentiles, bootstrap);
  v.ks = stats::KolmogorovSmirnov(baseline.histogram, other.histogram);
  return v;
}

std::vector<std::string> ScenarioNotes(const ScenarioComparison& s,
                                       const std::vector<CompareRun>& runs) {
  std::vector<std::string> notes;
  std::set<std::string> wakes;
  for (const auto& side : s.sides) wakes.insert(side.wake);
  if (wakes.size() > 1) {
    std::vector<std::string> parts;
    for (const auto& side : s.sides) parts.push_back(runs[side.run].label + " " + side.wake);
    notes.push_back(fmt::format("wake paths differ ({})", fmt::join(parts, ", ")));
  }
  for (const auto& side : s.sides) {
    if (side.status == "measuring") {
      notes.push_back(runs[side.run].label +
                      ": a checkpoint snapshot (the run stopped while measuring)");
    } else if (side.status != "complete") {
      notes.push_back(runs[side.run].label + ": scenario " + side.status + ", partial");
    }
  }
  for (const auto& side : s.sides) {
    for (const auto& reason : side.bounds.reasons) {
      notes.push_back(runs[side.run].label + ": " + reason);
    }
  }
  if (s.sides.front().run != 0) {
    notes.push_back(fmt::format("{} did not measure it; baseline here is {}", runs[0].label,
                                runs[s.sides.front().run].label));
  }
  return notes;
}

// ---- One statistic of a scenario, the rows every format shows --------------------------

struct Stat {
  const char* label;  ///< Text and HTML row label.
  const char* key;    ///< JSON key.
  double (*value)(const ScenarioSide&);
  int ci_index;  ///< Index into SideComparison::differences, -1 without a CI.
  bool ratio;    ///< Gets a ratio / wording column.
};

double Mean(const ScenarioSide& s) {
  return s.summary.mean_ns;
}
double StdDev(const ScenarioSide& s) {
  return s.summary.stddev_ns;
}
using SideExact = std::optional<results::ExactPercentileValues>;
using ExactField = int64_t results::ExactPercentileValues::*;

/// The exact sample from the samples log when the side has it, else the bucket edge.
double PercentileOf(const Histogram& h, const SideExact& e, double p, ExactField field) {
  return static_cast<double>(e ? (*e).*field : h.Percentile(p));
}
double P50(const ScenarioSide& s) {
  return PercentileOf(s.histogram, s.exact, 50.0, &results::ExactPercentileValues::median_ns);
}
double P99(const ScenarioSide& s) {
  return PercentileOf(s.histogram, s.exact, 99.0, &results::ExactPercentileValues::p99_ns);
}
double P999(const ScenarioSide& s) {
  return PercentileOf(s.histogram, s.exact, 99.9, &results::ExactPercentileValues::p999_ns);
}
double P9999(const ScenarioSide& s) {
  return PercentileOf(s.histogram, s.exact, 99.99, &results::ExactPercentileValues::p9999_ns);
}
double Max(const ScenarioSide& s) {
  return static_cast<double>(s.summary.max_ns);
}

constexpr Stat kStats[] = {
    {"mean", "mean", &Mean, -1, true},  {"stddev", "stddev", &StdDev, -1, true},
    {"p50", "p50", &P50, 0, true},      {"p99", "p99", &P99, 1, true},
    {"p99.9", "p99.9", &P999, 2, true}, {"p99.99", "p99.99", &P9999, -1, false},
    {"max", "max", &Max, -1, true},
};

// ---- Per period, beside the per-wake-up rows above --------------------------------------

/// A per-period statistic; sides without per-period statistics show "unknown".
struct PeriodStat {
  const char* label;
  const char* key;  ///< JSON key in a side's `per_period`.
  double (*value)(const Histogram&, const SideExact&);
};

double PeriodMean(const Histogram& h, const SideExact&) {
  return h.Mean();
}
double PeriodP50(const Histogram& h, const SideExact& e) {
  return PercentileOf(h, e, 50.0, &results::ExactPercentileValues::median_ns);
}
double PeriodP99(const Histogram& h, const SideExact& e) {
  return PercentileOf(h, e, 99.0, &results::ExactPercentileValues::p99_ns);
}
double PeriodP999(const Histogram& h, const SideExact& e) {
  return PercentileOf(h, e, 99.9, &results::ExactPercentileValues::p999_ns);
}
double PeriodMax(const Histogram& h, const SideExact&) {
  return static_cast<double>(h.max());
}

constexpr PeriodStat kPeriodStats[] = {
    {"mean", "mean_ns", &PeriodMean}, {"p50", "p50_ns", &PeriodP50},
    {"p99", "p99_ns", &PeriodP99},    {"p99.9", "p99.9_ns", &PeriodP999},
    {"max", "max_ns", &PeriodMax},
};

std::string PeriodCell(const PeriodStat& stat, const ScenarioSide& s) {
  if (!s.per_period) return "unknown";
  return fmt::format("{:.2f}", Us(stat.value(*s.per_period, s.exact_per_period)));
}

std::string PeriodWording(const PeriodStat& stat, const ScenarioSide& base,
                          const ScenarioSide& other) {
  if (!base.per_period || !other.per_period) return "";
  return stats::DifferenceWording(stat.value(*base.per_period, base.exact_per_period),
                                  stat.value(*other.per_period, other.exact_per_period));
}

nlohmann::ordered_json PeriodJson(const ScenarioSide& s) {
  if (!s.per_period) return nullptr;
  nlohmann::ordered_json j = {{"periods", s.per_period->count()}};
  for (const auto& stat : kPeriodStats) {
    j[stat.key] = stat.value(*s.per_period, s.exact_per_period);
  }
  j["percentile_method"] = s.exact_per_period ? "exact" : "bucket_upper_edge";
  return j;
}

constexpr const char* kPeriodHeading =
    "per period (every period, each skipped one late from its deadline to the wake-up; the "
    "rows above are per wake-up, as cyclictest counts)";

/// The percentile statement for the sides shown: exact where the samples log gave them.
std::string MethodOf(const Comparison& c, bool per_period) {
  std::vector<std::string> exact;
  size_t sides = 0;
  for (const auto& s : c.scenarios) {
    for (const auto& side : s.sides) {
      if (per_period && !side.per_period) continue;
      ++sides;
      if (per_period ? side.exact_per_period.has_value() : side.exact.has_value()) {
        exact.push_back(c.runs[side.run].label + " " + side.scenario);
      }
    }
  }
  if (per_period && sides == 0) return "unknown (no run has per-period statistics)";
  if (exact.empty()) return std::string(stats::kPercentileMethod);
  if (exact.size() == sides) return std::string(stats::kExactPercentileMethod);
  return fmt::format("{} for {}; the others: {}", stats::kExactPercentileMethod,
                     fmt::join(exact, ", "), stats::kPercentileMethod);
}

/// How far a side's value of `stat` can be trusted (imports of clipped or wrapped data).
results::Bound BoundOf(const Stat& stat, const ScenarioSide& s) {
  const std::string key = stat.key;
  if (key == "mean") return s.bounds.mean;
  if (key == "stddev") return s.bounds.stddev;
  if (key == "max") return s.bounds.max;
  return s.bounds.Percentile(static_cast<int64_t>(stat.value(s)));
}

/// The value as text: "?" when unknown, with >= or <= when a bound.
std::string Cell(const Stat& stat, const ScenarioSide& s) {
  return results::WithBound(fmt::format("{:.2f}", Us(stat.value(s))), BoundOf(stat, s));
}

std::string Wording(const Stat& stat, const ScenarioSide& base, const ScenarioSide& other,
                    const SideComparison& v) {
  if (!stat.ratio) return "";
  if (BoundOf(stat, base) != results::Bound::kExact ||
      BoundOf(stat, other) != results::Bound::kExact) {
    return "not comparable (a bound or unknown)";
  }
  const PercentileDifference* ci =
      stat.ci_index >= 0 ? &v.differences[static_cast<size_t>(stat.ci_index)] : nullptr;
  return stats::DifferenceWording(stat.value(base), stat.value(other), ci);
}

std::string CiText(const PercentileDifference& d) {
  return fmt::format("[{:+.2f}, {:+.2f}]", Us(d.lo_ns), Us(d.hi_ns));
}

std::string PValue(double p) {
  return p < 1e-300 ? "< 1e-300" : fmt::format("{:.3g}", p);
}

std::string MissedSkipped(const ScenarioSide& s) {
  return results::MissedSkippedText(s.missed_activations, s.skipped_periods, s.misses_unknown,
                                    s.misses_not_counted);
}

std::string BootstrapStatement(const stats::BootstrapOptions& b) {
  return fmt::format(
      "{:.0f} % CIs of (run - baseline): percentile bootstrap, {} replicates, seed {}; each "
      "replicate redraws N samples from each run's histogram (multinomial over its buckets)",
      b.confidence * 100.0, b.replicates, b.seed);
}

nlohmann::ordered_json RatioJson(double base, double other, const std::string& wording) {
  nlohmann::ordered_json ratio = nullptr;
  if (base > 0 && other > 0) ratio = base / other;
  return {{"baseline_over_other", ratio},
          {"percent_change", stats::PercentChange(base, other)},
          {"wording", wording}};
}

/// A string field of the run's system_info, or nullopt when the run does not record it.
std::optional<std::string> SystemField(const CompareRun& run, const char* key) {
  const auto& sys = run.suite.system;
  if (!sys.is_object() || !sys.contains(key) || !sys[key].is_string()) return std::nullopt;
  return sys[key].get<std::string>();
}

nlohmann::ordered_json OrNull(const std::optional<std::string>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

/// The table row that marks flagged sides, and the flags spelled out under the table.
bool AnyFlagged(const ScenarioComparison& s) {
  return std::any_of(s.sides.begin(), s.sides.end(),
                     [](const ScenarioSide& side) { return !side.flags.empty(); });
}

std::string FlagCell(const ScenarioSide& side) {
  return side.flags.empty() ? "no" : fmt::format("yes ({})", side.flags.size());
}

}  // namespace

std::string RunContext(const CompareRun& run) {
  const auto release = SystemField(run, "release");
  const auto model = SystemField(run, "preemption_model");
  const auto machine = SystemField(run, "machine");
  const auto board = SystemField(run, "board");
  const auto hypervisor = SystemField(run, "hypervisor");
  std::string out = fmt::format("kernel {} ({})", release.value_or("unknown"),
                                model && !model->empty() ? *model : "preemption model unknown");
  out += ", " + (machine && !machine->empty() ? *machine : std::string("machine unknown"));
  if (board && !board->empty()) out += ", " + *board;
  if (!hypervisor) {
    out += ", virtualization unknown";
  } else if (hypervisor->empty()) {
    out += ", no hypervisor detected";
  } else {
    out += ", virtual machine (" + *hypervisor + ")";
  }
  return out;
}

Expected<Comparison> BuildComparison(std::vector<CompareRun> runs,
                                     const stats::BootstrapOptions& bootstrap) {
  if (runs.size() < 2) {
    return UsageError(
        "compare needs at least two runs (the first is the baseline), e.g. "
        "'rtpulse compare stock/ rt/'");
  }
  Comparison c;
  c.bootstrap = bootstrap;
  std::vector<std::string> order;
  std::map<std::string, std::vector<ScenarioSide>> by_name;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (auto& [key, side] : SidesOf(runs[i].suite, i)) {
      if (!by_name.contains(key)) order.push_back(key);
      by_name[key].push_back(std::move(side));
    }
    // Scenarios listed but never measured (pending, failed early) are missing from this run.
    for (const auto& scenario : runs[i].suite.scenarios) {
      if (!scenario.latency && !by_name.contains(scenario.name)) {
        order.push_back(scenario.name);
        by_name[scenario.name];
      }
    }
    if (runs[i].suite.status != "complete") {
      c.warnings.push_back(fmt::format("{}: suite status '{}'; comparing what it measured",
                                       runs[i].label, runs[i].suite.status));
    }
  }
  for (const auto& key : order) {
    auto& sides = by_name[key];
    if (sides.size() < runs.size()) {
      MissingScenario m{key, {}};
      for (size_t i = 0; i < runs.size(); ++i) {
        const bool has = std::any_of(sides.begin(), sides.end(),
                                     [i](const ScenarioSide& s) { return s.run == i; });
        if (!has) m.missing_from.push_back(runs[i].label);
      }
      c.missing.push_back(std::move(m));
    }
    if (sides.size() < 2) continue;
    ScenarioComparison s;
    s.name = key;
    s.sides = std::move(sides);
    for (size_t i = 1; i < s.sides.size(); ++i) {
      s.versus.push_back(Versus(s.sides[0], s.sides[i], bootstrap));
    }
    s.notes = ScenarioNotes(s, runs);
    c.scenarios.push_back(std::move(s));
  }
  if (c.scenarios.empty()) {
    // One scenario per run under different names (two `rtpulse import` folders of
    // differently named files): the most common comparison, so compare them.
    std::vector<ScenarioSide> only = OnlyScenarios(runs);
    if (only.empty()) return NoCommonScenario(runs);
    ScenarioComparison s;
    std::vector<std::string> names;
    for (const auto& side : only) names.push_back(side.scenario);
    s.name = fmt::format("{}", fmt::join(names, " vs "));
    s.sides = std::move(only);
    for (size_t i = 1; i < s.sides.size(); ++i) {
      s.versus.push_back(Versus(s.sides[0], s.sides[i], bootstrap));
    }
    s.notes = ScenarioNotes(s, runs);
    s.notes.insert(s.notes.begin(), PairedNote(s.sides, runs));
    std::erase_if(c.missing, [&](const MissingScenario& m) {
      return std::find(names.begin(), names.end(), m.name) != names.end();
    });
    c.scenarios.push_back(std::move(s));
  }
  // A flagged side changes what its comparison means: said in the warnings too.
  for (const auto& s : c.scenarios) {
    for (const auto& side : s.sides) {
      for (const auto& flag : side.flags) {
        c.warnings.push_back(fmt::format("{}'s {} is flagged, so are its comparisons: {}",
                                         runs[side.run].label, side.scenario, flag));
      }
    }
  }
  c.runs = std::move(runs);
  return c;
}

std::string FormatCompareText(const Comparison& c) {
  std::string out;
  out += "runs:";
  for (size_t i = 0; i < c.runs.size(); ++i) {
    out += fmt::format(" {}{} = {};", c.runs[i].label, i == 0 ? " (baseline)" : "", c.runs[i].path);
  }
  out.back() = '\n';
  // What each run was measured on and what it warned of: every figure below depends on it.
  for (const auto& run : c.runs) {
    out += fmt::format("run {}: {}; status {}; {}\n", run.label, RunContext(run), run.suite.status,
                       run.suite.warnings.empty()
                           ? std::string("no warnings")
                           : fmt::format("{} warning(s):", run.suite.warnings.size()));
    for (const auto& w : run.suite.warnings) out += fmt::format("  warning: {}\n", w);
  }
  // Columns as wide as the longest label, so folder names of any length stay aligned.
  size_t col = 12;
  size_t vs_col = 28;
  for (const auto& r : c.runs) col = std::max(col, r.label.size());
  for (const auto& s : c.scenarios) {
    const auto& base = s.sides[0];
    for (const auto& v : s.versus) {
      vs_col = std::max(vs_col, c.runs[v.run].label.size() + 4 + c.runs[base.run].label.size());
    }
  }
  for (const auto& s : c.scenarios) {
    const auto& base = s.sides[0];
    out += fmt::format("\n{}\n", s.name);
    out += fmt::format("  {:<16}", "");
    for (const auto& side : s.sides) out += fmt::format(" {:>{}}", c.runs[side.run].label, col);
    for (const auto& v : s.versus) {
      out +=
          fmt::format("   {:<{}}",
                      fmt::format("{} vs {}", c.runs[v.run].label, c.runs[base.run].label), vs_col);
    }
    while (out.back() == ' ') out.pop_back();
    out += "\n";
    out += fmt::format("  {:<16}", "samples");
    for (const auto& side : s.sides) out += fmt::format(" {:>{}}", side.summary.count, col);
    out += "\n";
    if (AnyFlagged(s)) {
      out += fmt::format("  {:<16}", "flagged");
      for (const auto& side : s.sides) out += fmt::format(" {:>{}}", FlagCell(side), col);
      out += "\n";
    }
    for (const auto& stat : kStats) {
      out += fmt::format("  {:<16}", fmt::format("{} (us)", stat.label));
      for (const auto& side : s.sides) out += fmt::format(" {:>{}}", Cell(stat, side), col);
      for (size_t i = 0; i < s.versus.size(); ++i) {
        out += fmt::format("   {:<{}}", Wording(stat, base, s.sides[i + 1], s.versus[i]), vs_col);
      }
      while (out.back() == ' ') out.pop_back();
      out += "\n";
    }
    out += fmt::format("  {:<16}", "missed/skipped");
    for (const auto& side : s.sides) out += fmt::format(" {:>{}}", MissedSkipped(side), col);
    out += "\n";
    out += fmt::format("  {}\n", kPeriodHeading);
    out += fmt::format("  {:<16}", "periods");
    for (const auto& side : s.sides) {
      out += fmt::format(
          " {:>{}}", side.per_period ? std::to_string(side.per_period->count()) : "unknown", col);
    }
    out += "\n";
    for (const auto& stat : kPeriodStats) {
      out += fmt::format("  {:<16}", fmt::format("{} (us)", stat.label));
      for (const auto& side : s.sides) out += fmt::format(" {:>{}}", PeriodCell(stat, side), col);
      for (size_t i = 0; i < s.versus.size(); ++i) {
        out += fmt::format("   {:<{}}", PeriodWording(stat, base, s.sides[i + 1]), vs_col);
      }
      while (out.back() == ' ') out.pop_back();
      out += "\n";
    }
    for (const auto& v : s.versus) {
      const std::string who = fmt::format("{} - {}", c.runs[v.run].label, c.runs[base.run].label);
      out += fmt::format("  95 % CI of {} (us):", who);
      const auto& other = s.sides[static_cast<size_t>(&v - s.versus.data()) + 1];
      for (const auto& d : v.differences) {
        const bool exact = [&] {
          for (const ScenarioSide* side : {&base, &other}) {
            const int64_t value = side->histogram.Percentile(d.percentile);
            if (side->bounds.Percentile(value) != results::Bound::kExact) return false;
          }
          return true;
        }();
        out += fmt::format("  {} {}", stats::PercentileLabel(d.percentile),
                           exact ? CiText(d) : "n/a (a bound or unknown)");
      }
      out += fmt::format("\n  KS {} vs {}: D = {:.4f}, nominal p = {} (overstated: see note)\n",
                         c.runs[v.run].label, c.runs[base.run].label, v.ks.d, PValue(v.ks.p_value));
    }
    for (const auto& side : s.sides) {
      for (const auto& flag : side.flags) {
        out += fmt::format("  flagged: {}: {}\n", c.runs[side.run].label, flag);
      }
    }
    for (const auto& note : s.notes) out += fmt::format("  note: {}\n", note);
  }
  if (!c.missing.empty()) out += "\n";
  for (const auto& m : c.missing) {
    out += fmt::format("missing: {} not measured in {}\n", m.name, fmt::join(m.missing_from, ", "));
  }
  out +=
      "\nratios: baseline / other (\"N x lower\" = other is N times lower); "
      "\"no significant difference\" = the CI of the difference includes 0\n";
  out += fmt::format("{}\n", BootstrapStatement(c.bootstrap));
  out += fmt::format("{}\n", stats::kMaxNote);
  out += fmt::format("KS: two-sample Kolmogorov-Smirnov on the histograms; {}\n", stats::kKsCaveat);
  out += fmt::format("percentiles: {}\n", MethodOf(c, false));
  out += fmt::format("per-period percentiles: {}\n", MethodOf(c, true));
  out += "CIs and KS are per wake-up; the per-period rows get ratios only\n";
  for (const auto& w : c.warnings) out += fmt::format("warning: {}\n", w);
  return out;
}

nlohmann::ordered_json CompareJson(const Comparison& c) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const auto& r : c.runs) {
    std::vector<std::string> names;
    for (const auto& s : r.suite.scenarios) names.push_back(s.name);
    runs.push_back({{"label", r.label},
                    {"path", r.path},
                    {"status", r.suite.status},
                    {"rtpulse_version", r.suite.rtpulse_version},
                    {"kernel", r.suite.system.value("release", "")},
                    {"preemption_model", OrNull(SystemField(r, "preemption_model"))},
                    {"machine", OrNull(SystemField(r, "machine"))},
                    {"board", OrNull(SystemField(r, "board"))},
                    {"hypervisor", OrNull(SystemField(r, "hypervisor"))},
                    {"context", RunContext(r)},
                    {"warnings", r.suite.warnings},
                    {"scenarios", names}});
  }
  nlohmann::ordered_json scenarios = nlohmann::ordered_json::array();
  for (const auto& s : c.scenarios) {
    const auto& base = s.sides[0];
    nlohmann::ordered_json sides = nlohmann::ordered_json::array();
    for (const auto& side : s.sides) {
      sides.push_back({{"run", c.runs[side.run].label},
                       {"scenario", side.scenario},
                       {"wake", side.wake},
                       {"status", side.status},
                       {"samples", side.summary.count},
                       {"mean_ns", side.summary.mean_ns},
                       {"stddev_ns", side.summary.stddev_ns},
                       {"p50_ns", static_cast<int64_t>(P50(side))},
                       {"p99_ns", static_cast<int64_t>(P99(side))},
                       {"p99.9_ns", static_cast<int64_t>(P999(side))},
                       {"p99.99_ns", static_cast<int64_t>(P9999(side))},
                       {"max_ns", side.summary.max_ns},
                       {"percentile_method", side.exact ? "exact" : "bucket_upper_edge"},
                       {"missed_activations",
                        side.misses_not_counted ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(side.missed_activations)},
                       {"skipped_periods", side.misses_not_counted
                                               ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(side.skipped_periods)},
                       {"per_period", PeriodJson(side)},
                       {"flags", side.flags}});
      if (side.misses_unknown > 0) {
        sides.back()["misses_unknown"] = side.misses_unknown;
        sides.back()["missed_activations_is_lower_bound"] = true;
      }
      if (side.bounds.Any()) {
        // Imports: a value that cannot be known is null; every inexact one is named.
        nlohmann::ordered_json kinds = nlohmann::ordered_json::object();
        for (const auto& stat : kStats) {
          const results::Bound b = BoundOf(stat, side);
          kinds[std::string(stat.key) + "_ns"] = results::BoundName(b);
          if (b == results::Bound::kUnknown) sides.back()[std::string(stat.key) + "_ns"] = nullptr;
        }
        sides.back()["bounds"] = kinds;
        sides.back()["bounds_reasons"] = side.bounds.reasons;
      }
    }
    nlohmann::ordered_json versus = nlohmann::ordered_json::array();
    for (size_t i = 0; i < s.versus.size(); ++i) {
      const auto& v = s.versus[i];
      const auto& other = s.sides[i + 1];
      nlohmann::ordered_json ratios = nlohmann::ordered_json::object();
      for (const auto& stat : kStats) {
        if (!stat.ratio) continue;
        const std::string wording = Wording(stat, base, other, v);
        ratios[stat.key] = wording.rfind("not comparable", 0) == 0
                               ? nlohmann::ordered_json{{"baseline_over_other", nullptr},
                                                        {"percent_change", nullptr},
                                                        {"wording", wording}}
                               : RatioJson(stat.value(base), stat.value(other), wording);
      }
      nlohmann::ordered_json diffs = nlohmann::ordered_json::array();
      for (const auto& d : v.differences) {
        diffs.push_back({{"percentile", std::string(stats::PercentileLabel(d.percentile))},
                         {"difference_ns", d.other_ns - d.baseline_ns},
                         {"ci_low_ns", d.lo_ns},
                         {"ci_high_ns", d.hi_ns},
                         {"significant", d.Significant()}});
      }
      versus.push_back({{"run", c.runs[v.run].label},
                        {"baseline", c.runs[base.run].label},
                        {"ratios", ratios},
                        {"percentile_differences", diffs},
                        {"max_ci", nullptr},
                        {"ks",
                         {{"d", v.ks.d},
                          {"p_value_nominal", v.ks.p_value},
                          {"n_baseline", v.ks.n_baseline},
                          {"n_other", v.ks.n_other}}}});
    }
    scenarios.push_back({{"scenario", s.name},
                         {"baseline", c.runs[base.run].label},
                         {"runs", sides},
                         {"comparisons", versus},
                         {"notes", s.notes}});
  }
  nlohmann::ordered_json missing = nlohmann::ordered_json::array();
  for (const auto& m : c.missing) {
    missing.push_back({{"scenario", m.name}, {"missing_from", m.missing_from}});
  }
  return {{"schema", "rtpulse.compare"},
          {"schema_version", 1},
          {"units", "ns"},
          {"baseline", c.runs[0].label},
          {"runs", runs},
          {"bootstrap",
           {{"replicates", c.bootstrap.replicates},
            {"seed", c.bootstrap.seed},
            {"confidence", c.bootstrap.confidence},
            {"method", BootstrapStatement(c.bootstrap)}}},
          {"percentile_method", MethodOf(c, false)},
          {"per_period_percentile_method", MethodOf(c, true)},
          {"max_note", std::string(stats::kMaxNote)},
          {"ks_caveat", std::string(stats::kKsCaveat)},
          {"scenarios", scenarios},
          {"missing", missing},
          {"warnings", c.warnings}};
}

std::string CompareHtml(const Comparison& c, const std::vector<std::string>& figures_svg) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>rtpulse compare</title>\n<style>\n"
      "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\n"
      "table{border-collapse:collapse;margin:1em 0}\n"
      "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}\n"
      "th:first-child,td:first-child{text-align:left}\n"
      "td.w{text-align:left}\n.sig{color:#06c}.ns{color:#777}.flag{color:#b30}\n"
      ".note{color:#555;font-size:.9em}\nfigure{margin:1em 0}\n"
      "</style></head><body>\n<h1>rtpulse compare</h1>\n<p>Runs: ";
  for (size_t i = 0; i < c.runs.size(); ++i) {
    h += fmt::format("{}<b>{}</b>{} ({})", i == 0 ? "" : ", ", HtmlEscape(c.runs[i].label),
                     i == 0 ? " (baseline)" : "", HtmlEscape(c.runs[i].path));
  }
  h += ". Latencies in microseconds.</p>\n";
  h += "<table>\n<tr><th>run</th><th>measured on</th><th>status</th><th>warnings</th></tr>\n";
  for (const auto& run : c.runs) {
    std::string warnings;
    for (const auto& w : run.suite.warnings) warnings += HtmlEscape(w) + "<br>";
    h += fmt::format(
        "<tr><td>{}</td><td class=\"w\">{}</td><td>{}</td><td class=\"w\">{}</td></tr>\n",
        HtmlEscape(run.label), HtmlEscape(RunContext(run)), HtmlEscape(run.suite.status),
        warnings.empty() ? "none" : warnings);
  }
  h += "</table>\n";
  for (const auto& s : c.scenarios) {
    const auto& base = s.sides[0];
    h += fmt::format("<h2>{}</h2>\n<table>\n<tr><th>statistic</th>", HtmlEscape(s.name));
    for (const auto& side : s.sides) h += "<th>" + HtmlEscape(c.runs[side.run].label) + "</th>";
    for (const auto& v : s.versus) {
      h += fmt::format("<th>{} vs {}</th>", HtmlEscape(c.runs[v.run].label),
                       HtmlEscape(c.runs[base.run].label));
    }
    h += "</tr>\n<tr><td>samples</td>";
    for (const auto& side : s.sides) h += fmt::format("<td>{}</td>", side.summary.count);
    for (size_t i = 0; i < s.versus.size(); ++i) h += "<td></td>";
    h += "</tr>\n";
    if (AnyFlagged(s)) {
      h += "<tr><td>flagged</td>";
      for (const auto& side : s.sides) h += "<td class=\"flag\">" + FlagCell(side) + "</td>";
      for (size_t i = 0; i < s.versus.size(); ++i) h += "<td></td>";
      h += "</tr>\n";
    }
    for (const auto& stat : kStats) {
      h += fmt::format("<tr><td>{}</td>", stat.label);
      for (const auto& side : s.sides)
        h += fmt::format("<td>{}</td>", HtmlEscape(Cell(stat, side)));
      for (size_t i = 0; i < s.versus.size(); ++i) {
        const std::string w = Wording(stat, base, s.sides[i + 1], s.versus[i]);
        std::string ci;
        if (stat.ci_index >= 0)
          ci = " " + CiText(s.versus[i].differences[static_cast<size_t>(stat.ci_index)]);
        h += fmt::format("<td class=\"w {}\">{}{}</td>",
                         w == "no significant difference" ? "ns" : "sig", HtmlEscape(w), ci);
      }
      h += "</tr>\n";
    }
    h += "<tr><td>missed/skipped</td>";
    for (const auto& side : s.sides) h += "<td>" + MissedSkipped(side) + "</td>";
    for (size_t i = 0; i < s.versus.size(); ++i) h += "<td></td>";
    h += fmt::format("</tr>\n<tr><th colspan=\"{}\">{}</th></tr>\n<tr><td>per period: periods</td>",
                     1 + s.sides.size() + s.versus.size(), HtmlEscape(kPeriodHeading));
    for (const auto& side : s.sides) {
      h += fmt::format("<td>{}</td>",
                       side.per_period ? std::to_string(side.per_period->count()) : "unknown");
    }
    for (size_t i = 0; i < s.versus.size(); ++i) h += "<td></td>";
    h += "</tr>\n";
    for (const auto& stat : kPeriodStats) {
      h += fmt::format("<tr><td>per period: {}</td>", stat.label);
      for (const auto& side : s.sides) h += "<td>" + PeriodCell(stat, side) + "</td>";
      for (size_t i = 0; i < s.versus.size(); ++i) {
        h += "<td class=\"w\">" + HtmlEscape(PeriodWording(stat, base, s.sides[i + 1])) + "</td>";
      }
      h += "</tr>\n";
    }
    h += "<tr><td>KS D, nominal p</td>";
    for (size_t i = 0; i < s.sides.size(); ++i) h += "<td></td>";
    for (const auto& v : s.versus) {
      h += fmt::format("<td class=\"w\">D = {:.4f}, p = {}</td>", v.ks.d, PValue(v.ks.p_value));
    }
    h += "</tr>\n</table>\n";
    for (const auto& side : s.sides) {
      for (const auto& flag : side.flags) {
        h += fmt::format("<p class=\"flag\">flagged: {}: {}</p>\n",
                         HtmlEscape(c.runs[side.run].label), HtmlEscape(flag));
      }
    }
    for (const auto& note : s.notes) h += "<p class=\"note\">" + HtmlEscape(note) + "</p>\n";
  }
  for (const auto& m : c.missing) {
    h += fmt::format("<p class=\"note\">missing: {} not measured in {}</p>\n", HtmlEscape(m.name),
                     HtmlEscape(fmt::format("{}", fmt::join(m.missing_from, ", "))));
  }
  for (const auto& svg : figures_svg) h += "<figure>\n" + svg + "\n</figure>\n";
  h += "<h2>How to read this</h2>\n<ul class=\"note\">\n";
  h += "<li>Ratios are baseline / other: &quot;N x lower&quot; means the other run is N times "
       "lower. &quot;no significant difference&quot;: the CI of the difference includes 0. "
       "Brackets: the CI of (run - baseline) in us.</li>\n";
  for (const std::string& text : std::vector<std::string>{
           BootstrapStatement(c.bootstrap), std::string(stats::kMaxNote),
           "KS: two-sample Kolmogorov-Smirnov on the histograms; " + std::string(stats::kKsCaveat),
           "percentiles: " + MethodOf(c, false),
           "per-period percentiles: " + MethodOf(c, true) +
               "; CIs and KS are per wake-up, the per-period rows get ratios only"}) {
    h += "<li>" + HtmlEscape(text) + "</li>\n";
  }
  for (const auto& w : c.warnings) h += "<li>warning: " + HtmlEscape(w) + "</li>\n";
  h += "</ul>\n</body></html>\n";
  return h;
}

}  // namespace rtpulse::report
