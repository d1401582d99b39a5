// latency --textfile's observer (suite/textfile_observer.h): every event reaches the live
// view behind it, and every checkpoint rewrites DIR/rtpulse.prom with each wake path's latest
// snapshot; a failed run is marked failed. Injected snapshots, a real folder.
#include "suite/textfile_observer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace rtpulse::suite {
namespace {

/// Counts what reaches it.
class CountingObserver final : public measure::RunObserver {
 public:
  void OnPathStart(size_t, measure::WakePath) override { ++starts; }
  bool WantsTicks() const override { return false; }
  void OnTick(const std::vector<measure::LiveProbe>&, int64_t) override { ++ticks; }
  void OnStatsRequest(const std::vector<measure::LiveProbe>&, measure::StatsRequest) override {
    ++stats;
  }
  int starts = 0, ticks = 0, stats = 0;
};

measure::PathRecord Snapshot(const std::string& wake, uint64_t missed,
                             const std::vector<int64_t>& latencies_ns) {
  measure::PathRecord path;
  path.wake = wake;
  path.duration_ns = 1'000'000'000;
  measure::ProbeRecord probe;
  probe.cpu = 1;
  probe.wake = wake;
  probe.interval_ns = 1'000'000;
  probe.missed_activations = missed;
  for (const int64_t ns : latencies_ns) probe.histogram.Record(ns);
  path.probes.push_back(std::move(probe));
  return path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The value of the one line that starts with `metric` and has `label`, or "" when none.
std::string Value(const std::string& prom, const std::string& metric, const std::string& label) {
  std::istringstream lines(prom);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(metric + "{", 0) == 0 && line.find(label) != std::string::npos) {
      return line.substr(line.rfind(' ') + 1);
    }
  }
  return "";
}

TEST(TextfileObserverTest, EveryCheckpointRewritesTheFileWithEachPathsLatestSnapshot) {
  testutil::TempDir dir;
  CountingObserver view;
  results::LatencyRun facts;
  facts.rtpulse_version = "test";
  facts.start_realtime_ns = 1'700'000'000'000'000'000;
  TextfileObserver observer(view, dir.path(), facts);
  EXPECT_EQ(observer.CheckpointIntervalNs(), 10 * kNsPerSec);
  EXPECT_FALSE(observer.WantsTicks());  // the view's answer
  observer.OnPathStart(0, measure::WakePath::kAbs);
  observer.OnTick({}, 0);
  observer.OnStatsRequest({}, measure::StatsRequest::kPrint);
  EXPECT_EQ(view.starts, 1);
  EXPECT_EQ(view.ticks, 1);
  EXPECT_EQ(view.stats, 1);

  observer.OnCheckpoint(0, Snapshot("abs", 2, {10'000, 30'000, 20'000}));
  std::string prom = ReadFile(dir.File("rtpulse.prom"));
  EXPECT_NE(prom.find("status=\"running\""), std::string::npos) << prom;
  EXPECT_EQ(Value(prom, "rtpulse_missed_activations_total", "wake=\"abs\""), "2") << prom;
  EXPECT_EQ(Value(prom, "rtpulse_latency_max_seconds", "wake=\"abs\""), "3e-05") << prom;

  // A later snapshot of the same path replaces it; a second path joins it.
  observer.OnCheckpoint(0, Snapshot("abs", 5, {10'000, 30'000, 20'000, 40'000}));
  observer.OnCheckpoint(1, Snapshot("timerfd", 1, {15'000}));
  prom = ReadFile(dir.File("rtpulse.prom"));
  EXPECT_EQ(Value(prom, "rtpulse_missed_activations_total", "wake=\"abs\""), "5") << prom;
  EXPECT_EQ(Value(prom, "rtpulse_latency_max_seconds", "wake=\"abs\""), "4e-05") << prom;
  EXPECT_EQ(Value(prom, "rtpulse_missed_activations_total", "wake=\"timerfd\""), "1") << prom;

  observer.Failed();
  prom = ReadFile(dir.File("rtpulse.prom"));
  EXPECT_NE(prom.find("status=\"failed\""), std::string::npos) << prom;
  EXPECT_EQ(prom.find("status=\"running\""), std::string::npos) << prom;
  EXPECT_EQ(Value(prom, "rtpulse_missed_activations_total", "wake=\"abs\""), "5") << prom;
}

}  // namespace
}  // namespace rtpulse::suite
