#include "export/textfile.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "export/latency_metrics.h"
#include "export/machine_metrics.h"

namespace rtpulse::exporter {

void AppendRunInfo(const RunInfo& run, std::vector<MetricFamily>& out) {
  MetricFamily info;
  info.name = "rtpulse_run";
  info.help = "A batch run of rtpulse: its command and status";
  info.type = MetricType::kInfo;
  info.samples.push_back({"_info", {{"command", run.command}, {"status", run.status}}, 1});
  out.push_back(std::move(info));
  MetricFamily start;
  start.name = "rtpulse_run_start_timestamp_seconds";
  start.help = "When the run started (Unix time)";
  start.unit = "seconds";
  start.samples.push_back({"", {}, run.start_unix_s});
  out.push_back(std::move(start));
  MetricFamily updated;
  updated.name = "rtpulse_run_last_update_timestamp_seconds";
  updated.help = "When this file was last written (Unix time): at each checkpoint and at the end";
  updated.unit = "seconds";
  updated.samples.push_back({"", {}, run.updated_unix_s});
  out.push_back(std::move(updated));
}

namespace {

void AppendSystem(const results::LatencyRun& run, std::vector<MetricFamily>& out) {
  AppendSystemInfo(
      {{"version", run.rtpulse_version},
       {"kernel_release", run.release},
       {"preemption_model", run.preemption_model.empty() ? "unknown" : run.preemption_model},
       {"preempt_rt", run.preempt_rt ? "true" : "false"},
       {"machine", run.machine},
       {"hypervisor", run.hypervisor}},
      out);
}

void AddSeries(const results::LatencyRun& run, const Labels& first,
               std::vector<ProbeSeries>& series) {
  for (const results::PathRun& path : run.paths) {
    for (const results::ProbeResult& p : path.probes) {
      Labels labels = first;
      for (Label& l : ProbeLabels(p)) labels.push_back(std::move(l));
      series.push_back({std::move(labels), &p});
    }
  }
}

}  // namespace

std::vector<MetricFamily> LatencyRunFamilies(const results::LatencyRun& run, const RunInfo& info) {
  std::vector<MetricFamily> out;
  AppendRunInfo(info, out);
  AppendSystem(run, out);
  std::vector<ProbeSeries> series;
  AddSeries(run, {}, series);
  AppendLatencyFamilies(series, run.inject.has_value(), out);
  return out;
}

std::vector<MetricFamily> SuiteRunFamilies(const results::SuiteResult& suite) {
  std::vector<MetricFamily> out;
  AppendRunInfo({"suite", suite.status, static_cast<double>(suite.start_realtime_ns) / 1e9,
                 static_cast<double>(suite.updated_realtime_ns) / 1e9},
                out);
  std::vector<ProbeSeries> series;
  bool injecting = false;
  const results::LatencyRun* first = nullptr;
  for (const results::ScenarioResult& s : suite.scenarios) {
    if (!s.latency) continue;
    if (first == nullptr) first = &*s.latency;
    injecting = injecting || s.latency->inject.has_value();
    AddSeries(*s.latency, {{"scenario", s.name}}, series);
  }
  if (first != nullptr) AppendSystem(*first, out);
  AppendLatencyFamilies(series, injecting, out);
  return out;
}

Status CheckTextfileDir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return UsageError(fmt::format(
        "--textfile '{}': not a folder (give node_exporter's --collector.textfile.directory, "
        "e.g. /var/lib/prometheus/node-exporter)",
        dir));
  }
  return CheckWritable(fmt::format("{}/{}", dir, kTextfileName));
}

Status WriteTextfile(const std::string& dir, const std::vector<MetricFamily>& families) {
  return WriteFileAtomic(fmt::format("{}/{}", dir, kTextfileName),
                         Render(families, ExpositionFormat::kText));
}

Status WriteLatencyRunTextfile(const std::string& dir, const results::LatencyRun& run) {
  const RunInfo info{"latency", run.interrupted ? "interrupted" : "complete",
                     static_cast<double>(run.start_realtime_ns) / 1e9,
                     static_cast<double>(ClockNs(CLOCK_REALTIME)) / 1e9};
  return WriteTextfile(dir, LatencyRunFamilies(run, info));
}

}  // namespace rtpulse::exporter
