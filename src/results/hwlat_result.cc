#include "results/hwlat_result.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/timestamp.h"
#include "results/json_fields.h"

namespace rtpulse::results {
namespace {

using HwlatJson = nlohmann::json;

constexpr size_t kHwlatUnaccounted = 5;  // NoiseCauseKindName order.

int64_t HwlatCeilUs(int64_t ns) {
  return (ns + 999) / 1000;
}

void ReadHwlatSample(JsonFields f, HwlatSample& s) {
  f.Get("cpu", s.cpu);
  f.Get("start_ns", s.start_ns);
  f.Get("realtime_ns", s.realtime_ns);
  f.Get("latency_ns", s.latency_ns);
  f.Get("gap_ns", s.gap_ns);
}

void ReadHwlatCpu(JsonFields f, HwlatRun::Cpu& c) {
  f.Get("cpu", c.cpu);
  f.Get("duration_ns", c.duration_ns);
  f.Get("gaps", c.gaps);
  f.Get("examined", c.examined);
  f.Get("not_examined", c.not_examined);
}

/// "1530195543.398437548": hwlat's ts, seconds and ns of the wall clock.
std::string HwlatWallSeconds(int64_t realtime_ns) {
  return fmt::format("{}.{:09}", realtime_ns / 1'000'000'000, realtime_ns % 1'000'000'000);
}

std::string HwlatMtbfText(const HwlatRun& run) {
  if (const auto mtbf = run.MtbfSeconds()) {
    return fmt::format("MTBF {:.3f} s ({} samples in {:.3f} s measured)", *mtbf, run.samples.size(),
                       run.MeasuredSeconds());
  }
  return fmt::format("no sample in {:.3f} s measured: MTBF above that", run.MeasuredSeconds());
}

}  // namespace

int64_t HwlatRun::MaxNs() const {
  int64_t max = 0;
  for (const HwlatSample& s : samples) max = std::max(max, s.latency_ns);
  return max;
}

double HwlatRun::MeasuredSeconds() const {
  int64_t ns = 0;
  for (const Cpu& c : cpus) ns += c.duration_ns;
  return static_cast<double>(ns) / 1e9;
}

std::optional<double> HwlatRun::MtbfSeconds() const {
  if (samples.empty()) return std::nullopt;
  return MeasuredSeconds() / static_cast<double>(samples.size());
}

std::map<int64_t, uint64_t> HwlatRun::HistogramUs() const {
  std::map<int64_t, uint64_t> out;
  for (const HwlatSample& s : samples) ++out[HwlatCeilUs(s.latency_ns)];
  return out;
}

HwlatRun HwlatFromNoise(const NoiseRun& noise, int64_t threshold_ns) {
  HwlatRun run;
  run.rtpulse_version = noise.rtpulse_version;
  run.cmdline = noise.cmdline;
  run.mode = "loop";
  run.start_realtime_ns = noise.start_realtime_ns;
  run.end_realtime_ns = noise.end_realtime_ns;
  run.duration_planned_ns = noise.duration_planned_ns;
  run.threshold_ns = threshold_ns;
  run.hardlimit_ns = threshold_ns;
  run.interrupted = noise.interrupted;
  run.kernel = noise.kernel;
  run.machine = noise.machine;
  run.warnings = noise.warnings;
  for (const NoiseCpu& c : noise.cpus) {
    HwlatRun::Cpu& cpu = run.cpus.emplace_back();
    cpu.cpu = c.cpu;
    cpu.duration_ns = c.duration_ns;
    cpu.gaps = c.gaps;
    for (const NoiseEventRow& e : c.kept) {
      if (e.gap_ns <= threshold_ns) continue;
      if (!e.kind_ns) {
        ++cpu.not_examined;
        continue;
      }
      ++cpu.examined;
      const int64_t unaccounted = (*e.kind_ns)[kHwlatUnaccounted];
      if (unaccounted <= threshold_ns) continue;
      HwlatSample& s = run.samples.emplace_back();
      s.cpu = c.cpu;
      s.start_ns = e.start_ns;
      s.realtime_ns = noise.start_realtime_ns + (e.start_ns - noise.start_monotonic_ns);
      s.latency_ns = unaccounted;
      s.gap_ns = e.gap_ns;
    }
    // Events counted but not listed were never attributed.
    cpu.not_examined += c.events_not_kept;
  }
  std::stable_sort(
      run.samples.begin(), run.samples.end(),
      [](const HwlatSample& a, const HwlatSample& b) { return a.start_ns < b.start_ns; });
  return run;
}

nlohmann::json ToJson(const HwlatRun& run) {
  HwlatJson cpus = HwlatJson::array();
  for (const HwlatRun::Cpu& c : run.cpus) {
    cpus.push_back({{"cpu", c.cpu},
                    {"duration_ns", c.duration_ns},
                    {"gaps", c.gaps},
                    {"examined", c.examined},
                    {"not_examined", c.not_examined}});
  }
  HwlatJson samples = HwlatJson::array();
  for (const HwlatSample& s : run.samples) {
    samples.push_back({{"cpu", s.cpu},
                       {"start_ns", s.start_ns},
                       {"realtime_ns", s.realtime_ns},
                       {"latency_ns", s.latency_ns},
                       {"gap_ns", s.gap_ns}});
  }
  HwlatJson histogram = HwlatJson::object();
  for (const auto& [us, count] : run.HistogramUs()) histogram[std::to_string(us)] = count;
  const auto mtbf = run.MtbfSeconds();
  return {{"file_version", 1},
          {"version", run.rtpulse_version},
          {"cmdline", run.cmdline},
          {"mode", run.mode},
          {"mode_reason", run.mode_reason},
          {"start_time", UtcIsoSeconds(run.start_realtime_ns)},
          {"start_realtime_ns", run.start_realtime_ns},
          {"end_realtime_ns", run.end_realtime_ns},
          {"duration_planned_ns", run.duration_planned_ns},
          {"threshold_ns", run.threshold_ns},
          {"hardlimit_ns", run.hardlimit_ns},
          {"interrupted", run.interrupted},
          {"kernel", run.kernel},
          {"machine", run.machine},
          {"warnings", run.warnings},
          {"cpus", cpus},
          {"samples", samples},
          {"count", run.samples.size()},
          {"max_ns", run.MaxNs()},
          {"measured_s", run.MeasuredSeconds()},
          {"mtbf_s", mtbf ? HwlatJson(*mtbf) : HwlatJson(nullptr)},
          {"histogram_us", histogram},
          {"failed", run.Failed()}};
}

Expected<HwlatRun> HwlatRunFromJson(const nlohmann::json& doc) {
  HwlatRun run;
  std::string error;
  JsonFields f(doc, "", &error);
  f.Get("version", run.rtpulse_version);
  f.Get("cmdline", run.cmdline);
  f.Get("mode", run.mode);
  f.Get("mode_reason", run.mode_reason);
  f.Get("start_realtime_ns", run.start_realtime_ns);
  f.Get("end_realtime_ns", run.end_realtime_ns);
  f.Get("duration_planned_ns", run.duration_planned_ns);
  f.Get("threshold_ns", run.threshold_ns);
  f.Get("hardlimit_ns", run.hardlimit_ns);
  f.Get("interrupted", run.interrupted);
  f.Get("kernel", run.kernel);
  f.Get("machine", run.machine);
  f.Get("warnings", run.warnings);
  f.GetList("cpus", run.cpus, ReadHwlatCpu);
  f.GetList("samples", run.samples, ReadHwlatSample);
  if (!error.empty()) return UsageError("hwlat JSON: " + error);
  return run;
}

std::string FormatHwlatdetectReport(const HwlatRun& run) {
  std::string cpus;
  for (const HwlatRun::Cpu& c : run.cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(c.cpu);
  std::string out = fmt::format("hwlatdetect:  test duration {} seconds\n",
                                run.duration_planned_ns / 1'000'000'000);
  out += fmt::format("   detector: {}\n", run.mode);
  out += "   parameters:\n";
  out += fmt::format("        CPU list:          {}\n", cpus);
  out += fmt::format("        Latency threshold: {}us\n", HwlatCeilUs(run.threshold_ns));
  // The loop measures all the time on every CPU: its window and width are the run.
  out += fmt::format("        Sample window:     {}us\n", run.duration_planned_ns / 1000);
  out += fmt::format("        Sample width:      {}us\n", run.duration_planned_ns / 1000);
  out += "     Non-sampling period:  0us\n";
  out += "\nStarting test\n";
  out += run.interrupted ? "interrupted\n" : "test finished\n";
  const int64_t max = run.MaxNs();
  out += max == 0 ? std::string("Max Latency: Below threshold\n")
                  : fmt::format("Max Latency: {}us\n", HwlatCeilUs(max));
  out += fmt::format("Samples recorded: {}\n", run.samples.size());
  out += fmt::format("Samples exceeding threshold: {}\n", run.samples.size());
  for (const HwlatSample& s : run.samples) {
    out += fmt::format("ts: {}, inner:{}, outer:0, cpu:{}\n", HwlatWallSeconds(s.realtime_ns),
                       HwlatCeilUs(s.latency_ns), s.cpu);
  }
  return out;
}

std::string FormatHwlatSummary(const HwlatRun& run) {
  std::string out = fmt::format(
      "hwlat: {} mode{}, threshold {} ns, hard limit {} ns{}\n", run.mode,
      run.mode_reason.empty() ? std::string() : " (" + run.mode_reason + ")", run.threshold_ns,
      run.hardlimit_ns, run.interrupted ? " (interrupted: partial)" : "");
  out += fmt::format("{:>4} {:>10} {:>12} {:>10} {:>12} {:>8} {:>12}\n", "cpu", "duration s",
                     "gaps", "examined", "not examined", "samples", "max ns");
  for (const HwlatRun::Cpu& c : run.cpus) {
    uint64_t n = 0;
    int64_t max = 0;
    for (const HwlatSample& s : run.samples) {
      if (s.cpu != c.cpu) continue;
      ++n;
      max = std::max(max, s.latency_ns);
    }
    out += fmt::format("{:>4} {:>10.3f} {:>12} {:>10} {:>12} {:>8} {:>12}\n", c.cpu,
                       static_cast<double>(c.duration_ns) / 1e9, c.gaps, c.examined, c.not_examined,
                       n, max);
  }
  out += HwlatMtbfText(run) + "\n";
  for (const HwlatRun::Cpu& c : run.cpus) {
    if (c.not_examined > 0) {
      out += fmt::format(
          "cpu {}: {} gaps above the threshold were not attributed (beyond --explain-max or "
          "the events kept): hardware latency in them is not counted\n",
          c.cpu, c.not_examined);
    }
  }
  out += run.Failed()
             ? fmt::format("FAIL: max {} ns is above the hard limit {} ns\n", run.MaxNs(),
                           run.hardlimit_ns)
             : fmt::format("PASS: max {} ns, hard limit {} ns\n", run.MaxNs(), run.hardlimit_ns);
  for (const std::string& w : run.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace rtpulse::results
