// Scenario integrity on injected counters: the arithmetic, the thresholds, the wording.
#include "suite/integrity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "load/spec.h"

namespace rtpulse::suite {
namespace {

/// A reading where CPU c has total/idle/steal ticks from `per_cpu` and rtpulse used `own`.
BusyReading Reading(const std::vector<std::array<uint64_t, 3>>& per_cpu, uint64_t own) {
  BusyReading r;
  for (size_t c = 0; c < per_cpu.size(); ++c) {
    load::CpuTimes t;
    t.total = per_cpu[c][0];
    t.idle = per_cpu[c][1];
    t.steal = per_cpu[c][2];
    r.cpus[static_cast<int>(c)] = t;
  }
  r.own_ticks = own;
  r.own_known = true;
  return r;
}

Scenario WithLoads(const std::vector<std::string>& specs) {
  Scenario s;
  s.name = "s";
  const load::CpuScope scope{{0, 1, 2, 3}, {}};
  for (const auto& text : specs) {
    auto spec = load::ParseLoadSpec(text, scope);
    EXPECT_TRUE(spec) << text;
    s.loads.push_back(*spec);
    s.load_specs.push_back(text);
  }
  return s;
}

TEST(ScenarioIntegrity, OwnTicksAreUtimePlusStimeEvenWithBlanksInTheName) {
  // Fields after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt
  // cmajflt utime stime ...
  EXPECT_EQ(ParseOwnTicks("42 (a ) b) S 1 42 42 0 -1 4194560 10 0 0 0 123 45 0 0 20 0 3"),
            std::optional<uint64_t>(168));
  EXPECT_EQ(ParseOwnTicks("42 (x) S 1 2"), std::nullopt);
  // This process's real line: the same sum as fields 14 and 15 read with sscanf.
  std::ifstream in("/proc/self/stat");
  std::string line;
  std::getline(in, line);
  unsigned long utime = 0;
  unsigned long stime = 0;
  ASSERT_EQ(std::sscanf(line.c_str() + line.rfind(')') + 2,
                        "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime),
            2)
      << line;
  EXPECT_EQ(ParseOwnTicks(line), std::optional<uint64_t>(utime + stime)) << line;
}

TEST(ScenarioIntegrity, BusyExcludesIdleStealAndRtpulsesOwnTime) {
  // CPU 0: 1000 ticks, 200 idle, 100 steal -> ran 900, busy 700.
  // CPU 1: 1000 ticks, 900 idle, 0 steal   -> ran 1000, busy 100.  rtpulse: 50.
  const auto before = Reading({{5000, 3000, 10}, {7000, 6000, 0}}, 400);
  const auto after = Reading({{6000, 3200, 110}, {8000, 6900, 0}}, 450);
  const ScenarioBusy b = BusyBetween(before, after, {0, 1});
  EXPECT_EQ(b.ticks, 1900u);
  EXPECT_EQ(b.busy_ticks, 800u);
  EXPECT_EQ(b.own_ticks, 50u);
  EXPECT_DOUBLE_EQ(b.other_percent, 100.0 * 750 / 1900);
  EXPECT_DOUBLE_EQ(b.other_cpus, 2 * 750.0 / 1900);
  // Only CPU 1.
  EXPECT_DOUBLE_EQ(BusyBetween(before, after, {1}).other_percent, 100.0 * 50 / 1000);
  // rtpulse busier than the CPUs compared (its threads ran elsewhere): 0, not negative.
  EXPECT_DOUBLE_EQ(
      BusyBetween(before, Reading({{6000, 3200, 110}, {8000, 6900, 0}}, 5000), {1}).other_percent,
      0.0);
  // No time passed: nothing known.
  EXPECT_EQ(BusyBetween(before, before, {0, 1}).ticks, 0u);
}

TEST(ScenarioIntegrity, AnIdleScenarioThatWasBusyIsWarnedWithTheNumber) {
  const Scenario idle = WithLoads({});
  // 2 CPUs, 2000 ticks, 1260 busy of which rtpulse 0: 63 %.
  const auto check = CheckIntegrity(idle, {0, 1}, Reading({{0, 0, 0}, {0, 0, 0}}, 0),
                                    Reading({{1000, 370, 0}, {1000, 370, 0}}, 0));
  ASSERT_EQ(check.warnings.size(), 1u);
  EXPECT_EQ(check.warnings[0],
            "scenario integrity: idle scenario was not idle: 63% CPU busy from other work on CPUs "
            "0-1 (threshold 10%); its latencies were measured under load");
  EXPECT_DOUBLE_EQ(check.json["other_busy_percent"].get<double>(), 63.0);
  EXPECT_EQ(check.json["intended_busy_cpus"].get<double>(), 0.0);
  EXPECT_EQ(check.json["threshold_percent"].get<double>(), 10.0);
  // 10 % exactly is not above the threshold; rtpulse's own 300 ticks are not "other work".
  EXPECT_TRUE(CheckIntegrity(idle, {0, 1}, Reading({{0, 0, 0}, {0, 0, 0}}, 0),
                             Reading({{1000, 900, 0}, {1000, 900, 0}}, 0))
                  .warnings.empty());
  EXPECT_TRUE(CheckIntegrity(idle, {0, 1}, Reading({{0, 0, 0}, {0, 0, 0}}, 0),
                             Reading({{1000, 600, 0}, {1000, 800, 0}}, 400))
                  .warnings.empty());
}

TEST(ScenarioIntegrity, ALoadThatDidNotLoadIsWarned) {
  // cpu on CPUs 2-3 at 100 % + cpu on CPU 3 again: 2 CPUs intended (a CPU counts once).
  const Scenario heavy = WithLoads({"cpu:cpus=2-3", "cpu:cpus=3,intensity=40", "io"});
  const Intent intent = ScenarioIntent(heavy, {0, 1, 2, 3});
  EXPECT_DOUBLE_EQ(intent.busy_cpus, 2.0);
  EXPECT_EQ(intent.cpus, (std::vector<int>{2, 3}));
  const auto zero = Reading({{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, 0);
  // CPUs 2-3 only 0.9 CPUs busy (< 1.0 = half of 2): warned.
  const auto weak =
      CheckIntegrity(heavy, {0, 1, 2, 3}, zero,
                     Reading({{0, 0, 0}, {0, 0, 0}, {1000, 600, 0}, {1000, 500, 0}}, 0));
  ASSERT_EQ(weak.warnings.size(), 1u);
  EXPECT_NE(weak.warnings[0].find("the loads did not load: CPUs 2-3 were 0.90 CPUs busy, the "
                                  "loads should keep 2.00 busy (threshold 50% of that)"),
            std::string::npos)
      << weak.warnings[0];
  // 1.9 CPUs busy: fine.
  EXPECT_TRUE(CheckIntegrity(heavy, {0, 1, 2, 3}, zero,
                             Reading({{0, 0, 0}, {0, 0, 0}, {1000, 0, 0}, {1000, 100, 0}}, 0))
                  .warnings.empty());
  // intensity=50 on one CPU intends 0.5 CPUs.
  EXPECT_DOUBLE_EQ(ScenarioIntent(WithLoads({"cpu:cpus=1,intensity=50"}), {0, 1}).busy_cpus, 0.5);
}

TEST(ScenarioIntegrity, LoadsWhoseIntentIsUnknownAreNotChecked) {
  const Scenario io = WithLoads({"io:cpus=1"});
  const auto check = CheckIntegrity(io, {0, 1}, Reading({{0, 0, 0}, {0, 0, 0}}, 0),
                                    Reading({{1000, 1000, 0}, {1000, 1000, 0}}, 0));
  EXPECT_TRUE(check.warnings.empty());
  EXPECT_TRUE(check.json["intended_busy_cpus"].is_null());
  EXPECT_NE(check.json["note"].get<std::string>().find("not known"), std::string::npos);
}

}  // namespace
}  // namespace rtpulse::suite
