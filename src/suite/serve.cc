#include "suite/serve.h"

#include <fmt/format.h>

#include <mutex>

#include "core/clock.h"
#include "core/cpus.h"
#include "export/latency_metrics.h"
#include "measure/engine.h"
#include "measure/sample_log.h"
#include "suite/latency_record.h"

namespace rtpulse::suite {
namespace {

double UnixNow() {
  return static_cast<double>(ClockNs(CLOCK_REALTIME)) / 1e9;
}

/// The latest snapshot, handed from the engine's main thread to the server's thread.
class Published {
 public:
  void Set(results::PathRun run) {
    auto shared = std::make_shared<const results::PathRun>(std::move(run));
    const double now = UnixNow();
    std::lock_guard<std::mutex> lock(mu_);
    snapshot_ = std::move(shared);
    at_unix_s_ = now;
    ++count_;
  }
  std::shared_ptr<const results::PathRun> Get(double& at_unix_s) const {
    std::lock_guard<std::mutex> lock(mu_);
    at_unix_s = at_unix_s_;
    return snapshot_;
  }
  uint64_t count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const results::PathRun> snapshot_;
  double at_unix_s_ = 0;
  uint64_t count_ = 0;
};

/// The engine's checkpoints, every refresh, become the scrapes' snapshot.
class ServeObserver final : public measure::RunObserver {
 public:
  ServeObserver(Published& published, int64_t refresh_ns)
      : published_(published), refresh_ns_(refresh_ns) {}
  bool WantsTicks() const override { return false; }
  int64_t CheckpointIntervalNs() const override { return refresh_ns_; }
  void OnCheckpoint(size_t /*path_index*/, const measure::PathRecord& snapshot) override {
    published_.Set(ToPathRun(snapshot));  // a copy: the engine reuses its snapshot
  }

 private:
  Published& published_;
  int64_t refresh_ns_;
};

}  // namespace

std::vector<int> ServerCpus(const measure::LatencyPlan& plan, const std::vector<int>& online) {
  std::vector<int> measured;
  for (const auto& t : plan.threads) measured.push_back(t.cpu);
  std::vector<int> free = HousekeepingCpus(online, measured);
  if (free.empty() && !online.empty()) free.push_back(online.front());
  return free;
}

std::vector<exporter::MetricFamily> ServeFamilies(const results::PathRun* snapshot,
                                                  double snapshot_unix_s, bool injecting,
                                                  const ServeMachine& machine,
                                                  const std::vector<std::string>& monitor_columns,
                                                  const std::vector<double>& monitor_values) {
  std::vector<exporter::MetricFamily> families;
  exporter::AppendSystemInfo(machine.system_labels, families);
  exporter::MetricFamily warnings;
  warnings.name = "rtpulse_warning";
  warnings.help = "A warning about the environment or the measurement (its text)";
  warnings.type = exporter::MetricType::kInfo;
  for (const std::string& w : machine.warnings)
    warnings.samples.push_back({"_info", {{"text", w}}, 1});
  families.push_back(std::move(warnings));

  std::vector<exporter::ProbeSeries> series;
  if (snapshot != nullptr) {
    for (const auto& p : snapshot->probes) series.push_back({exporter::ProbeLabels(p), &p});
  }
  exporter::AppendLatencyFamilies(series, injecting, families);
  exporter::MetricFamily when;
  when.name = "rtpulse_serve_snapshot_timestamp_seconds";
  when.help = "When the latency figures above were copied from the probes (Unix time)";
  when.unit = "seconds";
  if (snapshot != nullptr) when.samples.push_back({"", {}, snapshot_unix_s});
  families.push_back(std::move(when));

  exporter::AppendChecks(machine.checks, machine.checks_ran_unix_s, families);
  std::vector<exporter::MonitorReading> readings;
  for (size_t i = 0; i < monitor_columns.size() && i < monitor_values.size(); ++i) {
    readings.push_back({monitor_columns[i], monitor_values[i]});
  }
  exporter::AppendMonitorReadings(readings, families);
  return families;
}

Expected<ServeOutcome> RunServe(const ServePlan& plan, ServeMachine machine,
                                const std::function<void(const std::string&)>& listening) {
  Published published;
  const bool injecting = plan.latency.inject.has_value();
  std::vector<std::string> columns;
  if (machine.monitor) {
    for (const auto& c : machine.monitor->columns()) columns.push_back(c.name);
  }
  auto server = exporter::MetricsServer::Start(
      plan.http, [&published, &machine, &columns, injecting](exporter::ExpositionFormat format) {
        double at = 0;
        const std::shared_ptr<const results::PathRun> snapshot = published.Get(at);
        const std::vector<double> values =
            machine.monitor ? machine.monitor->Latest() : std::vector<double>{};
        return exporter::Render(
            ServeFamilies(snapshot.get(), at, injecting, machine, columns, values), format);
      });
  if (!server) return server.error();
  if (machine.monitor) machine.monitor->Start();
  listening((*server)->authority());

  ServeObserver observer(published, plan.refresh_ns);
  auto measured = measure::RunLatency(plan.latency, &observer, nullptr);
  ServeOutcome outcome;
  if (measured) {
    outcome.run = ToLatencyRun(std::move(*measured));
    if (!outcome.run.paths.empty()) published.Set(outcome.run.paths.front());
  }
  (*server)->Stop();
  outcome.http = (*server)->stats();
  outcome.snapshots = published.count();
  if (machine.monitor) (void)machine.monitor->Stop();
  if (!measured) return measured.error();
  return outcome;
}

}  // namespace rtpulse::suite
