// Scenario integrity on injected counters: the arithmetic, the thresholds, the wording.
#include "suite/integrity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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
            "0-1 (threshold 10%); its latencies were measured under load; no other process was "
            "seen using CPU time (the kernel's own work, or processes that ended in between)");
  EXPECT_EQ(check.json["busiest_processes"], nlohmann::json::array());
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

TEST(ScenarioIntegrity, TheIdleWarningNamesTheBusiestOtherProcesses) {
  auto before = Reading({{0, 0, 0}, {0, 0, 0}}, 0);
  auto after = Reading({{1000, 370, 0}, {1000, 370, 0}}, 0);
  before.processes = {
      {10, {"stress-ng", 100}}, {11, {"kworker/0:1", 5}}, {12, {"sleepy", 7}}, {14, {"gone", 50}}};
  // 13 started in between (all its time counts); 12 did not run; 14 ended (not seen).
  after.processes = {{10, {"stress-ng", 500}},
                     {11, {"kworker/0:1", 25}},
                     {12, {"sleepy", 7}},
                     {13, {"new one", 40}}};
  const auto busiest = BusiestProcesses(before, after, 3);
  ASSERT_EQ(busiest.size(), 3u);
  EXPECT_EQ(busiest[0].pid, 10);
  EXPECT_EQ(busiest[0].ticks, 400u);
  EXPECT_EQ(busiest[1].comm, "new one");
  EXPECT_EQ(busiest[1].ticks, 40u);
  EXPECT_EQ(busiest[2].pid, 11);
  EXPECT_EQ(busiest[2].ticks, 20u);
  EXPECT_EQ(BusiestProcesses(before, after, 1).size(), 1u);

  const auto check = CheckIntegrity(WithLoads({}), {0, 1}, before, after);
  ASSERT_EQ(check.warnings.size(), 1u);
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  char expected[256];
  std::snprintf(expected, sizeof expected,
                "; the busiest other processes meanwhile (CPU time on any CPU): stress-ng (pid 10) "
                "%.2f s, new one (pid 13) %.2f s, kworker/0:1 (pid 11) %.2f s",
                400 * tick, 40 * tick, 20 * tick);
  EXPECT_TRUE(check.warnings[0].ends_with(expected)) << check.warnings[0];
  ASSERT_EQ(check.json["busiest_processes"].size(), 3u);
  EXPECT_EQ(check.json["busiest_processes"][0]["comm"], "stress-ng");
  EXPECT_DOUBLE_EQ(check.json["busiest_processes"][0]["cpu_seconds"].get<double>(), 400 * tick);
}

TEST(ScenarioIntegrity, ReadBusyReadsEveryProcessOfTheTreeItIsGiven) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "rtpulse-busy-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path root = tmpl;
  const auto write = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  write("proc/stat", "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 10 0 5 80 5 0 0 3 0 0\n");
  write("proc/self/stat", "7 (rtpulse) S 1 7 7 0 -1 0 0 0 0 0 30 12 0 0 20 0 3\n");
  write("proc/42/stat", "42 (my (odd) app) R 1 42 42 0 -1 0 0 0 0 0 100 20 0 0 20 0 1\n");
  write("proc/43/stat", "43 garbage\n");
  write("proc/acpi/stat", "44 (not a pid) S 1 1 1 0 -1 0 0 0 0 0 9 9 0 0 20 0 1\n");
  const BusyReading r = ReadBusy(FsRoot(root.string()));
  ASSERT_EQ(r.cpus.count(0), 1u);
  EXPECT_EQ(r.cpus.at(0).steal, 3u);
  EXPECT_TRUE(r.own_known);
  EXPECT_EQ(r.own_ticks, 42u);
  ASSERT_EQ(r.processes.size(), 1u);  // 43 does not parse, "acpi" is no pid
  EXPECT_EQ(r.processes.at(42).comm, "my (odd) app");
  EXPECT_EQ(r.processes.at(42).ticks, 120u);
  fs::remove_all(root);
  // This machine: at least init is seen, and this process is not (it is rtpulse's own time).
  const BusyReading live = ReadBusy(FsRoot());
  EXPECT_EQ(live.processes.count(1), 1u);
  EXPECT_EQ(live.processes.count(static_cast<int>(getpid())), 0u);
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
