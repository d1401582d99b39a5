#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.h"
#include "measure/engine.h"
#include "results/latency_result.h"

// `latency --textfile DIR`: node_exporter's textfile collector kept current while a run goes
// on (docs/fleet.md). The observer passes every event to the live view and rewrites
// DIR/rtpulse.prom from every checkpoint (each wake path's latest snapshot), so a long run is
// visible before it ends and a killed one leaves its last checkpoint.
namespace rtpulse::suite {

class TextfileObserver final : public measure::RunObserver {
 public:
  static constexpr int64_t kIntervalNs = 10 * kNsPerSec;

  /// `facts`: the run's identity (version, start time, system, injection) without paths.
  TextfileObserver(measure::RunObserver& inner, std::string dir, results::LatencyRun facts);

  void OnPathStart(size_t path_index, measure::WakePath path) override;
  bool WantsTicks() const override;
  void OnTick(const std::vector<measure::LiveProbe>& probes, int64_t elapsed_ns) override;
  void OnStatsRequest(const std::vector<measure::LiveProbe>& probes,
                      measure::StatsRequest request) override;
  int64_t CheckpointIntervalNs() const override { return kIntervalNs; }
  void OnCheckpoint(size_t path_index, const measure::PathRecord& snapshot) override;
  /// A run that failed: the last checkpoint's figures, marked failed (not left "running").
  void Failed();

 private:
  void Write(const char* status);

  measure::RunObserver& inner_;
  std::string dir_;
  results::LatencyRun run_;
  bool warned_ = false;
};

}  // namespace rtpulse::suite
