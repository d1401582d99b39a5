#include "results/noise_result.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/timestamp.h"
#include "results/json_fields.h"

namespace rtpulse::results {
namespace {

using Json = nlohmann::json;

int64_t CeilUs(int64_t ns) {
  return (ns + 999) / 1000;
}

/// A bucket's label: its upper edge, in us when the width is whole microseconds (oslat's
/// "001 (us)"), else in ns.
std::string BucketLabel(size_t k, int64_t width_ns) {
  const int64_t edge = static_cast<int64_t>(k + 1) * width_ns;
  if (width_ns % 1000 == 0) return fmt::format("{:03} (us)", edge / 1000);
  return fmt::format("{:03} (ns)", edge);
}

constexpr const char* kCauseKindNames[kNoiseCauseKinds] = {"irq",       "softirq", "thread",
                                                           "switch-in", "idle",    "unaccounted"};

Json CausesJson(const NoiseCauses& c) {
  Json by_kind = Json::object();
  for (size_t k = 0; k < kNoiseCauseKinds; ++k) {
    by_kind[kCauseKindNames[k]] = {{"ns", c.kind_ns[k]}, {"events", c.kind_events[k]}};
  }
  Json rows = Json::array();
  for (const NoiseCauseRow& r : c.rows) {
    rows.push_back({{"kind", r.kind},
                    {"name", r.name},
                    {"ns", r.ns},
                    {"events", r.events},
                    {"max_ns", r.max_ns}});
  }
  return {{"explained", c.explained},   {"not_explained", c.not_explained},
          {"incomplete", c.incomplete}, {"explained_ns", c.explained_ns},
          {"by_kind", by_kind},         {"rows", rows}};
}

void ReadCauseRow(JsonFields f, NoiseCauseRow& r) {
  f.Get("kind", r.kind);
  f.Get("name", r.name);
  f.Get("ns", r.ns);
  f.Get("events", r.events);
  f.Get("max_ns", r.max_ns);
}

void ReadCauses(JsonFields f, NoiseCauses& c) {
  f.Get("explained", c.explained);
  f.Get("not_explained", c.not_explained);
  f.Get("incomplete", c.incomplete);
  f.Get("explained_ns", c.explained_ns);
  JsonFields by_kind = f.Nested("by_kind");
  for (size_t k = 0; k < kNoiseCauseKinds; ++k) {
    JsonFields kind = by_kind.Nested(kCauseKindNames[k]);
    kind.Get("ns", c.kind_ns[k]);
    kind.Get("events", c.kind_events[k]);
  }
  f.GetList("rows", c.rows, ReadCauseRow);
}

/// "CPU 1: 812 of 3,400 events explained (...)": where the explained noise went, by kind.
std::string CausesLine(const NoiseCpu& cpu) {
  const NoiseCauses& c = *cpu.causes;
  std::string out = fmt::format("cpu {} causes: {} of {} events explained", cpu.cpu, c.explained,
                                c.explained + c.not_explained);
  if (c.explained_ns <= 0) return out + "\n";
  out += fmt::format(" ({} ns):", c.explained_ns);
  bool first = true;
  for (size_t k = 0; k < kNoiseCauseKinds; ++k) {
    if (c.kind_ns[k] == 0) continue;
    out +=
        fmt::format("{} {} {:.1f} % ({} ns in {} events)", first ? "" : ",", kCauseKindNames[k],
                    100.0 * static_cast<double>(c.kind_ns[k]) / static_cast<double>(c.explained_ns),
                    c.kind_ns[k], c.kind_events[k]);
    first = false;
  }
  out += "\n";
  const size_t shown = std::min<size_t>(c.rows.size(), 3);
  for (size_t i = 0; i < shown; ++i) {
    const NoiseCauseRow& r = c.rows[i];
    out += fmt::format("  {} {}: {} ns in {} events, at most {} ns in one\n", r.kind, r.name, r.ns,
                       r.events, r.max_ns);
  }
  if (c.incomplete > 0) {
    out += fmt::format(
        "  {} explained events had a hole in the trace (lost events): its time is in "
        "unaccounted\n",
        c.incomplete);
  }
  return out;
}

/// A CSV field in double quotes, its quotes doubled.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

Json CpuJson(const NoiseCpu& c) {
  Json out = {{"cpu", c.cpu},
              {"tid", c.tid},
              {"duration_ns", c.duration_ns},
              {"gaps", c.gaps},
              {"min_gap_ns", c.min_gap_ns},
              {"max_gap_ns", c.max_gap_ns},
              {"mean_gap_ns", c.MeanGapNs()},
              {"events", c.events},
              {"events_not_kept", c.events_not_kept},
              {"noise_ns", c.noise_ns},
              {"noise_ns_per_s", c.NoisePerSecondNs()},
              {"available_percent", c.AvailablePercent()},
              {"stopped_above", c.stopped_above},
              {"histogram", c.histogram}};
  if (c.causes) out["causes"] = CausesJson(*c.causes);
  return out;
}

/// oslat's thread object: min and max in whole us (rounded up, as its buckets), the mean in
/// us, the duration in s, the buckets keyed by number.
Json OslatThread(const NoiseCpu& c) {
  Json histogram = Json::object();
  for (size_t k = 0; k < c.histogram.size(); ++k) histogram[std::to_string(k + 1)] = c.histogram[k];
  return {{"cpu", c.cpu},
          {"min", CeilUs(c.min_gap_ns)},
          {"avg", c.MeanGapNs() / 1000.0},
          {"max", CeilUs(c.max_gap_ns)},
          {"duration", static_cast<double>(c.duration_ns) / 1e9},
          {"histogram", histogram}};
}

void ReadCpu(JsonFields f, NoiseCpu& c) {
  f.Get("cpu", c.cpu);
  f.Get("tid", c.tid);
  f.Get("duration_ns", c.duration_ns);
  f.Get("gaps", c.gaps);
  f.Get("min_gap_ns", c.min_gap_ns);
  f.Get("max_gap_ns", c.max_gap_ns);
  f.Get("events", c.events);
  f.Get("events_not_kept", c.events_not_kept);
  f.Get("noise_ns", c.noise_ns);
  f.Get("stopped_above", c.stopped_above);
  f.Get("histogram", c.histogram);
  if (f.Has("causes")) ReadCauses(f.Nested("causes"), c.causes.emplace());
}

}  // namespace

std::string_view NoiseCauseKindName(size_t kind) {
  return kind < kNoiseCauseKinds ? kCauseKindNames[kind] : "unaccounted";
}

double NoiseCpu::AvailablePercent() const {
  if (duration_ns <= 0) return 0;
  return 100.0 * (1.0 - static_cast<double>(noise_ns) / static_cast<double>(duration_ns));
}

double NoiseCpu::NoisePerSecondNs() const {
  if (duration_ns <= 0) return 0;
  return static_cast<double>(noise_ns) * 1e9 / static_cast<double>(duration_ns);
}

double NoiseCpu::MeanGapNs() const {
  if (gaps == 0) return 0;
  return static_cast<double>(duration_ns) / static_cast<double>(gaps);
}

nlohmann::json ToJson(const NoiseRun& run) {
  Json threads = Json::object();
  Json cpus = Json::array();
  for (size_t i = 0; i < run.cpus.size(); ++i) {
    threads[std::to_string(i)] = OslatThread(run.cpus[i]);
    cpus.push_back(CpuJson(run.cpus[i]));
  }
  return {{"file_version", 1},
          {"cmdline", run.cmdline},
          {"start_time", UtcIsoSeconds(run.start_realtime_ns)},
          {"end_time", UtcIsoSeconds(run.end_realtime_ns)},
          {"return_code", run.interrupted ? 130 : 0},
          {"sysinfo",
           {{"release", run.kernel}, {"machine", run.machine}, {"realtime", run.realtime_kernel}}},
          {"num_threads", run.cpus.size()},
          {"thread", threads},
          {"rtpulse",
           {{"version", run.rtpulse_version},
            {"start_realtime_ns", run.start_realtime_ns},
            {"start_monotonic_ns", run.start_monotonic_ns},
            {"end_realtime_ns", run.end_realtime_ns},
            {"policy", run.policy},
            {"priority", run.priority},
            {"threshold_ns", run.threshold_ns},
            {"bucket_width_ns", run.bucket_width_ns},
            {"duration_planned_ns", run.duration_planned_ns},
            {"stop_above_ns", run.stop_above_ns},
            {"explain", run.explain},
            {"interrupted", run.interrupted},
            {"warnings", run.warnings},
            {"cpus", cpus}}}};
}

Expected<NoiseRun> NoiseRunFromJson(const nlohmann::json& doc) {
  NoiseRun run;
  std::string error;
  JsonFields top(doc, "", &error);
  top.Get("cmdline", run.cmdline);
  JsonFields sys = top.Nested("sysinfo");
  sys.Get("release", run.kernel);
  sys.Get("machine", run.machine);
  sys.Get("realtime", run.realtime_kernel);
  JsonFields f = top.Nested("rtpulse");
  f.Get("version", run.rtpulse_version);
  f.Get("start_realtime_ns", run.start_realtime_ns);
  f.GetIfPresent("start_monotonic_ns", run.start_monotonic_ns);
  f.Get("end_realtime_ns", run.end_realtime_ns);
  f.Get("policy", run.policy);
  f.Get("priority", run.priority);
  f.Get("threshold_ns", run.threshold_ns);
  f.Get("bucket_width_ns", run.bucket_width_ns);
  f.Get("duration_planned_ns", run.duration_planned_ns);
  f.Get("stop_above_ns", run.stop_above_ns);
  f.GetIfPresent("explain", run.explain);  // Files before --explain lack it.
  f.Get("interrupted", run.interrupted);
  f.Get("warnings", run.warnings);
  f.GetList("cpus", run.cpus, ReadCpu);
  if (!error.empty()) return UsageError("noise JSON: " + error);
  return run;
}

std::string FormatOslatText(const NoiseRun& run) {
  std::string out;
  for (const NoiseCpu& c : run.cpus) {
    out += fmt::format("        Core:\t {}\n", c.cpu);
    for (size_t k = 0; k < c.histogram.size(); ++k) {
      out += fmt::format("    {}:\t {}{}\n", BucketLabel(k, run.bucket_width_ns), c.histogram[k],
                         k + 1 == c.histogram.size() ? " (including overflows)" : "");
    }
    out += fmt::format("     Minimum:\t {} (us)\n", CeilUs(c.min_gap_ns));
    out += fmt::format("     Average:\t {:.3f} (us)\n", c.MeanGapNs() / 1000.0);
    out += fmt::format("     Maximum:\t {} (us)\n", CeilUs(c.max_gap_ns));
    out += fmt::format("     Max-Min:\t {} (us)\n", CeilUs(c.max_gap_ns) - CeilUs(c.min_gap_ns));
    out +=
        fmt::format("    Duration:\t {:.3f} (sec)\n\n", static_cast<double>(c.duration_ns) / 1e9);
  }
  return out;
}

std::string FormatNoiseSummary(const NoiseRun& run) {
  std::string out = fmt::format("noise: {} {}, threshold {} ns, bucket width {} ns{}\n", run.policy,
                                run.priority, run.threshold_ns, run.bucket_width_ns,
                                run.interrupted ? " (interrupted: partial)" : "");
  out += fmt::format("{:>4} {:>10} {:>12} {:>10} {:>12} {:>8} {:>14} {:>12}\n", "cpu", "duration s",
                     "gaps", "mean ns", "max gap ns", "events", "noise ns/s", "available %");
  for (const NoiseCpu& c : run.cpus) {
    out += fmt::format("{:>4} {:>10.3f} {:>12} {:>10.1f} {:>12} {:>8} {:>14.0f} {:>12.4f}\n", c.cpu,
                       static_cast<double>(c.duration_ns) / 1e9, c.gaps, c.MeanGapNs(),
                       c.max_gap_ns, c.events, c.NoisePerSecondNs(), c.AvailablePercent());
  }
  for (const NoiseCpu& c : run.cpus) {
    if (c.events_not_kept > 0) {
      out += fmt::format("cpu {}: {} events beyond the kept {} are counted, not listed\n", c.cpu,
                         c.events_not_kept, c.kept.size());
    }
    if (c.stopped_above) {
      out +=
          fmt::format("cpu {}: a gap above -T {} ns stopped the run\n", c.cpu, run.stop_above_ns);
    }
  }
  for (const NoiseCpu& c : run.cpus) {
    if (c.causes) out += CausesLine(c);
  }
  for (const std::string& w : run.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string FormatNoiseEvents(const NoiseRun& run) {
  std::string out = "cpu,start_ns,gap_ns";
  if (run.explain) {
    for (size_t k = 0; k < kNoiseCauseKinds; ++k) {
      out += fmt::format(",{}_ns", kCauseKindNames[k]);
    }
    out += ",largest";
  }
  out += "\n";
  for (const NoiseCpu& c : run.cpus) {
    for (const NoiseEventRow& e : c.kept) {
      out += fmt::format("{},{},{}", c.cpu, e.start_ns, e.gap_ns);
      if (run.explain) {
        for (size_t k = 0; k < kNoiseCauseKinds; ++k) {
          out += e.kind_ns ? fmt::format(",{}", (*e.kind_ns)[k]) : std::string(",");
        }
        out += "," + (e.kind_ns ? Quoted(e.largest) : std::string());
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace rtpulse::results
