#include "suite/tune_ab.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace rtpulse::suite {
namespace {

using nlohmann::json;

std::string KnobText(sys::TuneKnob knob) {
  return std::string(sys::TuneKnobName(knob));
}

std::string BlockName(const AbBlock& b) {
  return fmt::format("{}-{}-{:02d}-{}", b.scenario, KnobText(b.knob), b.pair, b.on ? "on" : "off");
}

/// P(Binomial(n, 1/2) <= j).
double BinomialHalfCdf(size_t n, size_t j) {
  double term = std::pow(0.5, static_cast<double>(n));  // C(n, 0) / 2^n
  double sum = 0;
  for (size_t i = 0; i <= j && i <= n; ++i) {
    sum += term;
    term = term * static_cast<double>(n - i) / static_cast<double>(i + 1);
  }
  return sum;
}

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/// How many of the B block's changes were applied, and whether each was written back.
struct BlockTuning {
  size_t applied = 0;
  bool all_restored = true;
};

BlockTuning TuningOfBlock(const json& records) {
  BlockTuning t;
  if (!records.is_array()) return t;
  for (const auto& c : records) {
    if (c.value("status", "") != "applied") continue;
    ++t.applied;
    if (!c.value("restored", false)) t.all_restored = false;
  }
  return t;
}

json BlockJson(const AbBlock& b, const AbValue& v, const json& tuning) {
  json j = {{"block", BlockName(b)},
            {"scenario", b.scenario},
            {"pair", b.pair},
            {"condition", b.on ? "on" : "off"},
            {"status", v.status.empty() ? "pending" : v.status},
            {"measured", v.measured}};
  if (v.measured) {
    j["p99.9_ns"] = v.p999_ns;
    j["max_ns"] = v.max_ns;
    j["p99.9_exact"] = v.p999_exact;
    j["max_exact"] = v.max_exact;
    j["samples"] = v.samples;
    j["missed_activations"] = v.missed_activations;
    j["skipped_periods"] = v.skipped_periods;
  }
  if (b.on) j["tuning"] = tuning.is_null() ? json::array() : tuning;
  return j;
}

/// Why a block cannot give `metric`'s value, or "".
std::string BlockProblem(const AbBlock& b, const AbValue& v, const json& tuning,
                         const std::string& metric) {
  if (!v.measured) {
    return fmt::format("{} {}", BlockName(b), v.status.empty() ? "not run" : v.status);
  }
  const bool exact = metric == "p99.9" ? v.p999_exact : v.max_exact;
  if (!exact) {
    return fmt::format("{}: its {} is a bound (histogram clipped), not a value", BlockName(b),
                       metric);
  }
  if (b.on) {
    const BlockTuning t = TuningOfBlock(tuning);
    if (t.applied == 0) return fmt::format("{}: the knob applied nothing", BlockName(b));
    if (!t.all_restored) return fmt::format("{}: a change was not restored", BlockName(b));
  }
  return "";
}

json EffectJson(const std::string& scenario, const std::string& metric,
                const std::vector<size_t>& offs, const std::vector<size_t>& ons,
                const TuneAbPlan& plan, const std::vector<AbValue>& values,
                const std::vector<json>& tuning) {
  std::vector<double> off_values;
  std::vector<double> on_values;
  std::vector<double> differences;
  json excluded = json::array();
  size_t on_lower = 0;
  for (size_t p = 0; p < offs.size() && p < ons.size(); ++p) {
    std::string problem;
    for (const size_t i : {offs[p], ons[p]}) {
      if (problem.empty()) problem = BlockProblem(plan.blocks[i], values[i], tuning[i], metric);
    }
    if (!problem.empty()) {
      excluded.push_back(fmt::format("pair {}: {}", p + 1, problem));
      continue;
    }
    const auto value = [&](size_t i) {
      return static_cast<double>(metric == "p99.9" ? values[i].p999_ns : values[i].max_ns);
    };
    off_values.push_back(value(offs[p]));
    on_values.push_back(value(ons[p]));
    differences.push_back(value(ons[p]) - value(offs[p]));
    if (differences.back() < 0) ++on_lower;
  }
  json j = {{"scenario", scenario},
            {"metric", metric},
            {"pairs_used", differences.size()},
            {"pairs_excluded", excluded},
            {"differences_ns", differences}};
  const MedianInterval ci = SignTestInterval(differences);
  j["measurable"] = ci.measurable;
  if (!ci.measurable) {
    j["note"] = fmt::format("not measurable: fewer than {} complete pairs ({})", kAbMinPairs,
                            differences.size());
    for (const char* key : {"off_median_ns", "on_median_ns", "median_difference_ns", "ci_low_ns",
                            "ci_high_ns", "coverage"}) {
      j[key] = nullptr;
    }
    return j;
  }
  j["off_median_ns"] = MedianOf(off_values);
  j["on_median_ns"] = MedianOf(on_values);
  j["median_difference_ns"] = ci.median;
  j["ci_low_ns"] = ci.low;
  j["ci_high_ns"] = ci.high;
  j["coverage"] = ci.coverage;
  j["on_lower_pairs"] = on_lower;
  return j;
}

json KnobJson(const AbKnob& k, const TuneAbPlan& plan, const std::vector<AbValue>& values,
              const std::vector<json>& tuning) {
  json j = {{"knob", KnobText(k.knob)}, {"applies", k.applies}, {"detail", k.detail}};
  if (!k.applies) return j;
  json blocks = json::array();
  // Per base scenario, the off and on block of each pair, by pair number.
  std::vector<std::string> scenarios;
  std::vector<std::vector<size_t>> offs;
  std::vector<std::vector<size_t>> ons;
  for (size_t i = 0; i < plan.blocks.size(); ++i) {
    const AbBlock& b = plan.blocks[i];
    if (b.knob != k.knob) continue;
    blocks.push_back(BlockJson(b, values[i], tuning[i]));
    auto it = std::find(scenarios.begin(), scenarios.end(), b.scenario);
    if (it == scenarios.end()) {
      scenarios.push_back(b.scenario);
      offs.emplace_back(static_cast<size_t>(plan.pairs), plan.blocks.size());
      ons.emplace_back(static_cast<size_t>(plan.pairs), plan.blocks.size());
      it = scenarios.end() - 1;
    }
    const auto s = static_cast<size_t>(it - scenarios.begin());
    (b.on ? ons : offs)[s][static_cast<size_t>(b.pair - 1)] = i;
  }
  json effects = json::array();
  for (size_t s = 0; s < scenarios.size(); ++s) {
    for (const char* metric : {"p99.9", "max"}) {
      effects.push_back(EffectJson(scenarios[s], metric, offs[s], ons[s], plan, values, tuning));
    }
  }
  j["blocks"] = blocks;
  j["effects"] = effects;
  return j;
}

std::string UsText(const json& ns) {
  return fmt::format("{:.1f}", ns.get<double>() / 1000.0);
}

std::string SignedUsText(const json& ns) {
  return fmt::format("{:+.1f}", ns.get<double>() / 1000.0);
}

}  // namespace

AbKnob KnobFromRecords(sys::TuneKnob knob, const nlohmann::json& records) {
  AbKnob k;
  k.knob = knob;
  std::vector<std::string> applied;
  std::vector<std::string> other;
  for (const auto& c : records) {
    const std::string what = c.value("what", "");
    const std::string status = c.value("status", "");
    if (status == "applied") {
      applied.push_back(
          fmt::format("{}: {} -> {}", what, c.value("before", ""), c.value("after", "")));
    } else {
      other.push_back(fmt::format("{} {}: {}", what, status, c.value("detail", "")));
    }
  }
  k.applies = !applied.empty();
  const auto& list = k.applies ? applied : other;
  std::string text;
  for (size_t i = 0; i < list.size() && i < 3; ++i) text += (i == 0 ? "" : "; ") + list[i];
  if (list.size() > 3) text += fmt::format("; and {} more", list.size() - 3);
  if (list.empty()) text = "nothing to change on this machine";
  k.detail = k.applies ? text : "does not apply here: " + text;
  return k;
}

AbKnob KnobNotTried(sys::TuneKnob knob, std::string reason) {
  AbKnob k;
  k.knob = knob;
  k.detail = "not tried: " + std::move(reason);
  return k;
}

TuneAbPlan ExpandTuneAb(SuiteConfig& config, std::vector<AbKnob> knobs, int pairs) {
  TuneAbPlan plan;
  plan.pairs = pairs;
  plan.knobs = std::move(knobs);
  std::vector<Scenario> base = std::move(config.scenarios);
  config.scenarios.clear();
  for (const AbKnob& k : plan.knobs) {
    if (!k.applies) continue;
    for (int pair = 1; pair <= pairs; ++pair) {
      // ABBA: a drift over the run (warming, a neighbour's load) falls on both conditions.
      const bool first_on = pair % 2 == 0;
      for (const bool on : {first_on, !first_on}) {
        for (const Scenario& s : base) {
          AbBlock b{k.knob, pair, on, s.name};
          Scenario block = s;
          block.name = BlockName(b);
          block.description = fmt::format("{} ({} {}, pair {})", s.description, KnobText(k.knob),
                                          on ? "on" : "off", pair);
          config.scenarios.push_back(std::move(block));
          plan.blocks.push_back(std::move(b));
        }
      }
    }
  }
  return plan;
}

AbValue BlockValue(const results::ScenarioResult& scenario) {
  AbValue v;
  v.status = results::ScenarioStatusName(scenario.status);
  if (scenario.status != results::ScenarioStatus::kComplete || !scenario.latency) return v;
  results::SuiteResult one;
  one.scenarios.push_back(scenario);
  const auto rows = results::SummarizeScenarios(one);
  if (rows.empty() || rows.front().samples == 0) return v;
  const results::ScenarioStats& row = rows.front();
  v.measured = true;
  v.p999_ns = row.p999_ns;
  v.max_ns = row.max_ns;
  v.p999_exact = row.bounds.Percentile(row.p999_ns) == results::Bound::kExact;
  v.max_exact = row.bounds.max == results::Bound::kExact;
  v.samples = row.samples;
  v.missed_activations = row.missed_activations;
  v.skipped_periods = row.skipped_periods;
  return v;
}

MedianInterval SignTestInterval(std::vector<double> differences, double level) {
  MedianInterval ci;
  const size_t n = differences.size();
  if (n < static_cast<size_t>(kAbMinPairs)) return ci;
  std::sort(differences.begin(), differences.end());
  size_t k = 0;
  while (k + 1 <= n / 2 && 2 * BinomialHalfCdf(n, k) <= 1 - level) ++k;
  if (k == 0) return ci;
  ci.measurable = true;
  ci.median = MedianOf(differences);
  ci.low = differences[k - 1];
  ci.high = differences[n - k];
  ci.coverage = 1 - 2 * BinomialHalfCdf(n, k - 1);
  return ci;
}

nlohmann::json TuneAbJson(const TuneAbPlan& plan, const std::vector<AbValue>& values,
                          const std::vector<nlohmann::json>& tuning) {
  json order = json::array();
  for (const auto& b : plan.blocks) order.push_back(BlockName(b));
  json knobs = json::array();
  for (const auto& k : plan.knobs) knobs.push_back(KnobJson(k, plan, values, tuning));
  return {{"pairs", plan.pairs},
          {"min_pairs", kAbMinPairs},
          {"confidence", kAbConfidence},
          {"design",
           "per knob, pairs of blocks: pair p runs off (as found) then on when p is odd, on then "
           "off when p is even (ABBA); each block runs every scenario with the same settle and "
           "duration; every change is restored after its block"},
          {"effect", "on - off of the block values, per pair; median over the pairs"},
          {"interval",
           "sign-test interval of the median paired difference: the k-th smallest and k-th "
           "largest of the n differences, k the largest with coverage 1 - 2 P(Bin(n, 1/2) <= "
           "k-1) >= confidence"},
          {"order", order},
          {"knobs", knobs}};
}

std::string FormatTuneAb(const nlohmann::json& t) {
  if (!t.is_object()) return "";
  std::string out = fmt::format(
      "Tuning A/B (--tune-ab): {} pairs per knob, ABBA order; effect = on - off per pair, "
      "median, with the sign-test interval (at least {:.0f}%)\n",
      t.value("pairs", 0), 100 * t.value("confidence", kAbConfidence));
  for (const auto& k : t["knobs"]) {
    out += fmt::format("  {}: {}\n", k["knob"].get<std::string>(), k["detail"].get<std::string>());
    if (!k.value("applies", false)) continue;
    for (const auto& e : k["effects"]) {
      const std::string label = fmt::format("    {} {:<6}", e["scenario"].get<std::string>(),
                                            e["metric"].get<std::string>());
      if (!e["measurable"].get<bool>()) {
        out += fmt::format("{} {}\n", label, e["note"].get<std::string>());
      } else {
        out += fmt::format(
            "{} off {} us, on {} us; on - off {} us, interval [{}, {}] us ({:.1f}%, {} pairs, on "
            "lower in {})\n",
            label, UsText(e["off_median_ns"]), UsText(e["on_median_ns"]),
            SignedUsText(e["median_difference_ns"]), SignedUsText(e["ci_low_ns"]),
            SignedUsText(e["ci_high_ns"]), 100 * e["coverage"].get<double>(),
            e["pairs_used"].get<size_t>(), e["on_lower_pairs"].get<size_t>());
      }
      for (const auto& x : e["pairs_excluded"]) {
        out += fmt::format("      excluded {}\n", x.get<std::string>());
      }
    }
    for (const auto& b : k["blocks"]) {
      if (b.value("missed_activations", uint64_t{0}) > 0) {
        out += fmt::format("    note: {} missed {} activations ({} periods skipped)\n",
                           b["block"].get<std::string>(), b["missed_activations"].get<uint64_t>(),
                           b["skipped_periods"].get<uint64_t>());
      }
    }
  }
  return out;
}

}  // namespace rtpulse::suite
