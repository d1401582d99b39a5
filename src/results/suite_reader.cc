#include "results/suite_reader.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/fs_root.h"
#include "core/printable.h"
#include "results/killed_run.h"

namespace rtpulse::results {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Reads `key` of `object` as T, or fails naming the field.
template <typename T>
Expected<T> Field(const json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end())
    return UsageError(fmt::format("{}: missing field '{}'", Printable(where), key));
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return UsageError(
        fmt::format("{}: field '{}' has the wrong type ({})", where, key, it->type_name()));
  }
}

template <typename T>
T FieldOr(const json& object, const char* key, T fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

Expected<ProbeResult> ProbeFromJson(const json& t, const std::string& where) {
  ProbeResult p;
  p.index = FieldOr<int>(t, "thread_index", 0);
  p.cpu = FieldOr<int>(t, "cpu", -1);
  p.tid = FieldOr<int>(t, "tid", 0);
  p.policy = FieldOr<std::string>(t, "policy", "");
  p.priority = FieldOr<int>(t, "priority", 0);
  p.interval_ns = FieldOr<int64_t>(t, "interval_ns", 0);
  p.wake = FieldOr<std::string>(t, "wake", "");
  auto buckets = t.find("histogram_log");
  if (buckets == t.end() || !buckets->is_array()) {
    return UsageError(where +
                      ": missing 'histogram_log' (not written by rtpulse? use "
                      "'rtpulse import' for other tools' files)");
  }
  for (const auto& b : *buckets) {
    if (!b.is_array() || b.size() != 3) {
      return UsageError(where + ": 'histogram_log' entries must be [lo_ns, hi_ns, count]");
    }
    p.histogram.RecordN(b[0].get<int64_t>(), b[2].get<uint64_t>());
  }
  auto stats = t.find("stats");
  if (stats != t.end() && p.histogram.count() > 0) {
    const auto count = FieldOr<uint64_t>(*stats, "count", 0);
    if (count != p.histogram.count()) {
      return UsageError(fmt::format("{}: stats.count {} but the histogram holds {} samples", where,
                                    count, p.histogram.count()));
    }
    const double mean = FieldOr<double>(*stats, "mean_ns", 0.0);
    p.histogram.RestoreMoments(
        FieldOr<int64_t>(*stats, "min_ns", p.histogram.min()),
        FieldOr<int64_t>(*stats, "max_ns", p.histogram.max()),
        static_cast<int64_t>(std::llround(mean * static_cast<double>(count))),
        FieldOr<double>(*stats, "stddev_ns", 0.0));
    if (auto b = stats->find("bounds"); b != stats->end() && b->is_object()) {
      p.bounds.min = BoundFromName(FieldOr<std::string>(*b, "min_ns", "exact"));
      p.bounds.max = BoundFromName(FieldOr<std::string>(*b, "max_ns", "exact"));
      p.bounds.mean = BoundFromName(FieldOr<std::string>(*b, "mean_ns", "exact"));
      p.bounds.stddev = BoundFromName(FieldOr<std::string>(*b, "stddev_ns", "exact"));
      p.bounds.reasons = FieldOr<std::vector<std::string>>(*stats, "bounds_reasons", {});
      if (auto v = b->find("percentiles_lower_bound_from_ns"); v != b->end() && v->is_number()) {
        p.bounds.percentiles_lower_from_ns = v->get<int64_t>();
      }
      if (auto v = b->find("percentiles_upper_bound_to_ns"); v != b->end() && v->is_number()) {
        p.bounds.percentiles_upper_to_ns = v->get<int64_t>();
      }
      p.bounds.percentiles_unknown = FieldOr<std::string>(*b, "percentiles", "") == "unknown";
    }
  }
  auto per = t.find("per_period");
  // Written only when known: without it (imports, files from before it existed) per-period
  // statistics stay unknown rather than copies of the per-wake-up ones.
  p.per_period_unknown = per == t.end();
  if (per != t.end() && per->is_object()) {
    // The skipped periods' own latencies (per period = histogram_log + these), with their
    // exact moments restored as the main histogram's are.
    auto log = per->find("skipped_histogram_log");
    auto st = per->find("skipped_stats");
    if (log == per->end() || !log->is_array() || st == per->end() || !st->is_object()) {
      return UsageError(where + ": 'per_period' needs 'skipped_histogram_log' and 'skipped_stats'");
    }
    for (const auto& b : *log) {
      if (!b.is_array() || b.size() != 3) {
        return UsageError(where +
                          ": 'per_period.skipped_histogram_log' entries must be [lo_ns, hi_ns, "
                          "count]");
      }
      p.skipped_histogram.RecordN(b[0].get<int64_t>(), b[2].get<uint64_t>());
    }
    const auto count = p.skipped_histogram.count();
    if (count > 0) {
      const double mean = FieldOr<double>(*st, "mean_ns", 0.0);
      p.skipped_histogram.RestoreMoments(
          FieldOr<int64_t>(*st, "min_ns", p.skipped_histogram.min()),
          FieldOr<int64_t>(*st, "max_ns", p.skipped_histogram.max()),
          static_cast<int64_t>(std::llround(mean * static_cast<double>(count))),
          FieldOr<double>(*st, "stddev_ns", 0.0));
    }
  }
  p.latencies_not_printed = FieldOr<uint64_t>(t, "latencies_not_printed", 0);
  p.periods_elapsed = FieldOr<uint64_t>(t, "periods_elapsed", p.histogram.count());
  // null: not counted (a run with no deadline), never read as 0.
  const auto missed = t.find("missed_activations");
  p.misses_not_counted = missed != t.end() && missed->is_null();
  p.missed_activations = FieldOr<uint64_t>(t, "missed_activations", 0);
  p.misses_unknown = FieldOr<uint64_t>(t, "misses_unknown", 0);
  p.skipped_periods = FieldOr<uint64_t>(t, "skipped_periods", 0);
  p.grid_restarts = FieldOr<uint64_t>(t, "grid_restarts", 0);
  p.samples_logged = FieldOr<uint64_t>(t, "samples_logged", 0);
  p.samples_dropped = FieldOr<uint64_t>(t, "samples_dropped", 0);
  p.injections = FieldOr<uint64_t>(t, "injections", 0);
  if (auto smi = t.find("smi_count"); smi != t.end() && smi->is_number_unsigned()) {
    p.smi_count = smi->get<uint64_t>();
  }
  p.degraded = FieldOr<bool>(t, "degraded", false);
  p.notes = FieldOr<std::vector<std::string>>(t, "notes", {});
  p.spikes_not_kept = FieldOr<uint64_t>(t, "spikes_not_kept", 0);
  if (auto spikes = t.find("spikes"); spikes != t.end() && spikes->is_array()) {
    for (const auto& s : *spikes) {
      p.spikes.push_back(
          Spike{FieldOr<uint64_t>(s, "seq", 0), 0, FieldOr<int64_t>(s, "latency_ns", 0)});
    }
  }
  return p;
}

Expected<json> ParseFile(const std::string& path) {
  const auto text = ReadWholeFile(path);
  if (!text) {
    return UsageError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  }
  try {
    return json::parse(*text);
  } catch (const json::parse_error& e) {
    return UsageError(fmt::format("{}: not valid JSON at byte {}: {}", Printable(path), e.byte,
                                  Printable(e.what())));
  }
}

ScenarioStatus StatusFromName(const std::string& name) {
  for (auto s :
       {ScenarioStatus::kPending, ScenarioStatus::kSettling, ScenarioStatus::kMeasuring,
        ScenarioStatus::kComplete, ScenarioStatus::kInterrupted, ScenarioStatus::kFailed}) {
    if (name == ScenarioStatusName(s)) return s;
  }
  return ScenarioStatus::kFailed;
}

/// A scenario's `key` block of exact percentiles (result.json), if it has one.
std::optional<ExactPercentileValues> ExactFromJson(const json& scenario, const char* key) {
  auto e = scenario.find(key);
  if (e == scenario.end() || !e->is_object()) return std::nullopt;
  ExactPercentileValues v;
  v.median_ns = FieldOr<int64_t>(*e, "median_ns", 0);
  v.p95_ns = FieldOr<int64_t>(*e, "p95_ns", 0);
  v.p99_ns = FieldOr<int64_t>(*e, "p99_ns", 0);
  v.p999_ns = FieldOr<int64_t>(*e, "p99.9_ns", 0);
  v.p9999_ns = FieldOr<int64_t>(*e, "p99.99_ns", 0);
  return v;
}

}  // namespace

Expected<LatencyRun> LatencyRunFromJson(const json& latency) {
  if (!latency.is_object()) return UsageError("latency document is not a JSON object");
  LatencyRun run;
  if (auto sys = latency.find("sysinfo"); sys != latency.end()) {
    run.sysname = FieldOr<std::string>(*sys, "sysname", "");
    run.nodename = FieldOr<std::string>(*sys, "nodename", "");
    run.release = FieldOr<std::string>(*sys, "release", "");
    run.version = FieldOr<std::string>(*sys, "version", "");
    run.machine = FieldOr<std::string>(*sys, "machine", "");
    run.preempt_rt = FieldOr<int>(*sys, "realtime", 0) != 0;
  }
  run.cmdline = FieldOr<std::string>(latency, "cmdline:", "");
  run.return_code = FieldOr<int>(latency, "return_code", 0);
  auto r = latency.find("rtpulse");
  if (r == latency.end()) {
    return UsageError(
        "no 'rtpulse' block: not written by rtpulse (use 'rtpulse import' for "
        "cyclictest and other tools' files)");
  }
  run.rtpulse_version = FieldOr<std::string>(*r, "version", "");
  run.interrupted = FieldOr<bool>(*r, "interrupted", false);
  run.degraded = FieldOr<bool>(*r, "degraded", false);
  run.warnings = FieldOr<std::vector<std::string>>(*r, "warnings", {});
  run.preemption_model = FieldOr<std::string>(*r, "preemption_model", "");
  run.hypervisor = FieldOr<std::string>(*r, "hypervisor", "");
  run.dma_latency = FieldOr<std::string>(*r, "dma_latency", "");
  run.idle_states = FieldOr<std::string>(*r, "idle_states", "");
  if (auto e = r->find("explain"); e != r->end()) {
    auto explain = ExplainFromJson(*e);
    if (!explain) return UsageError("rtpulse." + explain.error().message);
    run.explain = std::move(*explain);
  }
  auto threads = latency.find("thread");
  if (threads == latency.end() || !threads->is_object()) {
    return UsageError("missing 'thread' object");
  }
  auto paths = r->find("paths");
  if (paths == r->end() || !paths->is_array()) return UsageError("missing 'rtpulse.paths'");
  for (const auto& pj : *paths) {
    PathRun path;
    path.wake = FieldOr<std::string>(pj, "wake", "");
    path.duration_ns = FieldOr<int64_t>(pj, "duration_ns", 0);
    for (const auto& index : pj.value("threads", json::array())) {
      const std::string key = std::to_string(index.get<int>());
      auto t = threads->find(key);
      if (t == threads->end()) {
        return UsageError(fmt::format("path '{}' lists thread {} but 'thread.{}' is missing",
                                      Printable(path.wake), key, key));
      }
      auto probe = ProbeFromJson(*t, "thread." + key);
      if (!probe) return probe.error();
      path.probes.push_back(std::move(*probe));
    }
    run.paths.push_back(std::move(path));
  }
  return run;
}

std::string RunFolder(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return path;
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

namespace {

/// The budget a run was judged against (`verdict.budget`), none when it had none.
Expected<std::optional<stats::Budget>> SavedBudget(const json& j) {
  const auto v = j.find("verdict");
  if (v == j.end() || !v->is_object()) return std::optional<stats::Budget>{};
  const auto b = v->find("budget");
  if (b == v->end() || !b->is_string()) return std::optional<stats::Budget>{};
  auto budget = stats::ParseBudget(b->get<std::string>());
  if (!budget) return UsageError("verdict.budget: " + budget.error().message);
  return std::optional<stats::Budget>{*budget};
}

}  // namespace

Expected<SuiteResult> ReadSuiteResult(const std::string& path) {
  std::error_code ec;
  const std::string file = fs::is_directory(path, ec) ? path + "/result.json" : path;
  auto parsed = ParseFile(file);
  if (!parsed) return parsed.error();
  const json& j = *parsed;
  SuiteResult suite;
  auto fail = [&](const Error& e) { return UsageError(fmt::format("{}: {}", file, e.message)); };
  if (j.is_object() && j.contains("file_version") && !j.contains("schema")) {
    // A single latency document: one scenario named after the file.
    auto run = LatencyRunFromJson(j);
    if (!run) return fail(run.error());
    suite.status = run->interrupted ? "interrupted" : "complete";
    suite.rtpulse_version = run->rtpulse_version;
    suite.cmdline = run->cmdline;
    suite.warnings = run->warnings;
    ScenarioResult s;
    s.name = fs::path(file).stem().string();
    s.status = run->interrupted ? ScenarioStatus::kInterrupted : ScenarioStatus::kComplete;
    s.latency = std::move(*run);
    suite.scenarios.push_back(std::move(s));
    auto budget = SavedBudget(j);
    if (!budget) return fail(budget.error());
    suite.budget = *budget;
    return suite;
  }
  if (!j.is_object() || FieldOr<std::string>(j, "schema", "") != kSuiteSchema) {
    return UsageError(fmt::format(
        "{}: not an rtpulse result (expected schema '{}'; give a folder written by 'rtpulse "
        "suite' or 'rtpulse import', or an 'rtpulse latency --json' file)",
        file, kSuiteSchema));
  }
  const int version = FieldOr<int>(j, "schema_version", 0);
  if (version < 1 || version > kSuiteSchemaVersion) {
    return UsageError(
        fmt::format("{}: schema_version {} is not one this rtpulse reads (1..{}); "
                    "use a newer rtpulse",
                    file, version, kSuiteSchemaVersion));
  }
  suite.rtpulse_version = FieldOr<std::string>(j, "rtpulse_version", "");
  suite.cmdline = FieldOr<std::string>(j, "cmdline", "");
  suite.status = FieldOr<std::string>(j, "status", "");
  suite.writer = j.value("writer", json());
  if (suite.status == "running") {
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    if (auto note = StaleRunningNote(j, now.count())) {
      suite.status = "killed";
      suite.status_note = *note;
    }
  } else if (suite.status == "killed") {
    suite.status_note = KilledNote(j);
  }
  suite.config = j.value("config", json::object());
  suite.system = j.value("system", json::object());
  suite.tuning = j.value("tuning", json::array());
  suite.tune_ab = j.value("tune_ab", json());
  suite.monitor = j.value("monitor", json::object());
  suite.warnings = FieldOr<std::vector<std::string>>(j, "warnings", {});
  if (!suite.status_note.empty()) suite.warnings.insert(suite.warnings.begin(), suite.status_note);
  auto scenarios = Field<json>(j, "scenarios", file);
  if (!scenarios) return scenarios.error();
  for (const auto& sj : *scenarios) {
    ScenarioResult s;
    s.name = FieldOr<std::string>(sj, "name", "");
    s.description = FieldOr<std::string>(sj, "description", "");
    s.load_specs = FieldOr<std::vector<std::string>>(sj, "loads", {});
    s.status = StatusFromName(FieldOr<std::string>(sj, "status", "failed"));
    s.error = FieldOr<std::string>(sj, "error", "");
    s.settle_ns = static_cast<int64_t>(FieldOr<double>(sj, "settle_s", 0) * 1e9);
    s.planned_ns = static_cast<int64_t>(FieldOr<double>(sj, "planned_s", 0) * 1e9);
    s.start_realtime_ns = FieldOr<int64_t>(sj, "start_realtime_ns", 0);
    s.end_realtime_ns = FieldOr<int64_t>(sj, "end_realtime_ns", 0);
    s.loads = sj.value("load_reports", json::array());
    s.warnings = FieldOr<std::vector<std::string>>(sj, "warnings", {});
    s.cpu_busy = sj.value("cpu_busy", json());
    s.samples_file = FieldOr<std::string>(sj, "samples_file", "");
    s.exact_percentiles = ExactFromJson(sj, "exact_percentiles");
    s.exact_per_period_percentiles = ExactFromJson(sj, "exact_per_period_percentiles");
    if (auto l = sj.find("latency"); l != sj.end() && l->is_object()) {
      auto run = LatencyRunFromJson(*l);
      if (!run)
        return fail(Error{run.error().code, "scenario '" + s.name + "': " + run.error().message});
      s.latency = std::move(*run);
    }
    suite.scenarios.push_back(std::move(s));
  }
  auto budget = SavedBudget(j);
  if (!budget) return fail(budget.error());
  suite.budget = *budget;
  return suite;
}

}  // namespace rtpulse::results
