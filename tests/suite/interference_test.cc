// rtpulse control --interference's design and analysis with a fake RunCondition returning
// injected execution times and counters: no load, no real-time thread.
#include "suite/interference.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "core/float_compare.h"
#include "load/spec.h"
#include "support/test_paths.h"

namespace rtpulse::suite {
namespace {

using IC = InterferenceCondition;
using measure::Counter;
using measure::CounterReading;

InterferencePlan FourConditions(int repetitions = 5, uint64_t jobs = 400) {
  InterferencePlan plan;
  plan.cpu = 1;
  plan.other_cpus = {0, 2, 3};
  plan.jobs_per_run = jobs;
  plan.repetitions = repetitions;
  plan.llc_bytes = 2 * 1024 * 1024;
  plan.work_set_bytes = 4 * 1024 * 1024;
  return plan;
}

/// Injected truth: isolated ~ N(100 us, 3 us), the others scaled.
double FactorOf(IC c) {
  switch (c) {
    case IC::kIsolated:
      return 1.0;
    case IC::kCpuOther:
      return 1.01;
    case IC::kMemoryOther:
      return 1.31;
    case IC::kOwnCpu:
      return 1.0;
  }
  return 1.0;
}

/// A fake run: recorded, with known exec times and counters (context switches 1 per job plus
/// the repetition, page faults 3 per run, instructions unsupported as on a VM).
struct FakeRuns {
  uint64_t jobs = 400;
  std::vector<std::pair<IC, int>> calls;
  std::map<IC, std::vector<int64_t>> returned;
  std::map<IC, uint64_t> context_switches;

  Expected<InterferenceRun> operator()(IC c, int rep) {
    calls.emplace_back(c, rep);
    std::mt19937_64 rng(static_cast<uint64_t>(calls.size()) * 7919);
    std::normal_distribution<double> dist(100'000, 3'000);
    InterferenceRun run;
    run.condition = c;
    run.repetition = rep;
    for (uint64_t k = 0; k < jobs; ++k) {
      run.exec_ns.push_back(std::llround(dist(rng) * FactorOf(c)));
    }
    auto& pool = returned[c];
    pool.insert(pool.end(), run.exec_ns.begin(), run.exec_ns.end());
    for (const Counter counter : measure::kAllCounters) {
      CounterReading r;
      r.counter = counter;
      if (counter == Counter::kContextSwitches) {
        r.supported = true;
        r.value = jobs + static_cast<uint64_t>(rep);
        context_switches[c] += r.value;
      } else if (counter == Counter::kPageFaults) {
        r.supported = true;
        r.value = 3;
      } else if (counter == Counter::kCpuMigrations) {
        r.supported = true;
        r.value = 0;
      } else {
        r.unsupported = "not supported here: no PMU (ENOENT)";
      }
      run.counters.push_back(r);
    }
    return run;
  }
};

double MedianByHand(std::vector<int64_t> v) {
  const size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(n / 2), v.end());
  const double upper = static_cast<double>(v[n / 2]);
  if (n % 2 == 1) return upper;
  const double lower =
      static_cast<double>(*std::max_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(n / 2)));
  return (lower + upper) / 2;
}

const ConditionResult& ResultOf(const InterferenceReport& r, IC c) {
  for (const auto& x : r.conditions) {
    if (x.condition == c) return x;
  }
  ADD_FAILURE() << "no condition " << ConditionName(c);
  return r.conditions.front();
}

TEST(InterferenceTest, NamesAndDescriptions) {
  EXPECT_EQ(ConditionName(IC::kIsolated), "isolated");
  EXPECT_EQ(ConditionName(IC::kCpuOther), "cpu-other");
  EXPECT_EQ(ConditionName(IC::kMemoryOther), "memory-other");
  EXPECT_EQ(ConditionName(IC::kOwnCpu), "own-cpu");
  EXPECT_EQ(ConditionDescription(IC::kCpuOther), "CPU-only load on the other CPUs");
}

TEST(InterferenceTest, ARunFromTheLoopsRecordTakesExecAsEndMinusStart) {
  control::ControlRunRecord record;
  const int64_t starts[] = {1'000, 4'001'500, 8'000'900};
  const int64_t execs[] = {120'000, 95'500, 131'250};
  for (size_t k = 0; k < 3; ++k) {
    control::JobTiming job;
    job.release_ns = static_cast<int64_t>(k) * 4'000'000;
    job.start_ns = starts[k];
    job.end_ns = starts[k] + execs[k];
    record.jobs.push_back(job);
  }
  record.warnings = {"RT throttling is on"};
  record.interrupted = true;
  CounterReading cs;
  cs.counter = Counter::kContextSwitches;
  cs.supported = true;
  cs.value = 3;
  const auto run = InterferenceRunFromRecord(IC::kOwnCpu, 4, record, {cs});
  EXPECT_EQ(run.condition, IC::kOwnCpu);
  EXPECT_EQ(run.repetition, 4);
  EXPECT_EQ(run.exec_ns, (std::vector<int64_t>{120'000, 95'500, 131'250}));
  ASSERT_EQ(run.counters.size(), 1u);
  EXPECT_EQ(run.counters[0].value, 3u);
  EXPECT_EQ(run.warnings, (std::vector<std::string>{"RT throttling is on",
                                                    "the loop was interrupted after 3 jobs"}));
}

TEST(InterferenceTest, OrderInterleavesAndRotatesPerRepetition) {
  const auto order = InterferenceOrder(FourConditions(4));
  const std::vector<std::pair<IC, int>> want = {
      {IC::kIsolated, 1},    {IC::kCpuOther, 1},    {IC::kMemoryOther, 1}, {IC::kOwnCpu, 1},
      {IC::kCpuOther, 2},    {IC::kMemoryOther, 2}, {IC::kOwnCpu, 2},      {IC::kIsolated, 2},
      {IC::kMemoryOther, 3}, {IC::kOwnCpu, 3},      {IC::kIsolated, 3},    {IC::kCpuOther, 3},
      {IC::kOwnCpu, 4},      {IC::kIsolated, 4},    {IC::kCpuOther, 4},    {IC::kMemoryOther, 4}};
  EXPECT_EQ(order, want);
  // Over 4 repetitions every condition takes every position once.
  for (size_t pos = 0; pos < 4; ++pos) {
    std::vector<IC> at;
    for (int rep = 0; rep < 4; ++rep) at.push_back(order[static_cast<size_t>(rep) * 4 + pos].first);
    std::sort(at.begin(), at.end());
    EXPECT_EQ(at, (std::vector<IC>{IC::kIsolated, IC::kCpuOther, IC::kMemoryOther, IC::kOwnCpu}));
  }
  EXPECT_EQ(InterferenceOrder(FourConditions(7)).size(), 28u);
}

TEST(InterferenceTest, ConditionLoadsAreValidSuiteLoadSpecs) {
  InterferencePlan plan = FourConditions();
  const load::CpuScope scope{{0, 1, 2, 3}, {}};
  EXPECT_TRUE(ConditionLoads(IC::kIsolated, plan).empty());
  for (const auto& [llc, mb] : std::vector<std::pair<size_t, int>>{
           {0, 64}, {2u << 20, 64}, {32u << 20, 128}, {(40u << 20) + 1, 161}}) {
    plan.llc_bytes = llc;
    const auto memory = ConditionLoads(IC::kMemoryOther, plan);
    ASSERT_EQ(memory.size(), 1u);
    auto spec = load::ParseLoadSpec(memory[0], scope);
    ASSERT_TRUE(spec.has_value()) << memory[0] << ": " << spec.error().message;
    EXPECT_EQ(spec->name, "memory");
    EXPECT_EQ(spec->params.cpus, plan.other_cpus);
    ASSERT_EQ(spec->params.options.size(), 1u);
    EXPECT_EQ(spec->params.options[0].first, "mb");
    EXPECT_EQ(spec->params.options[0].second, std::to_string(mb));
    EXPECT_GT(static_cast<size_t>(mb) << 20, llc);  // Each worker streams past the LLC.
  }
  auto cpu = load::ParseLoadSpec(ConditionLoads(IC::kCpuOther, plan).at(0), scope);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->name, "cpu");
  EXPECT_EQ(cpu->params.cpus, plan.other_cpus);
  auto own = load::ParseLoadSpec(ConditionLoads(IC::kOwnCpu, plan).at(0), scope);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(own->name, "cpu");
  EXPECT_EQ(own->params.cpus, std::vector<int>{1});
}

TEST(InterferenceTest, InflationsAreOverTheRepetitionMedians) {
  const InterferencePlan plan = FourConditions();
  FakeRuns fake;
  const std::atomic<bool> stop{false};
  auto report = RunInterference(
      plan, [&](IC c, int rep) { return fake(c, rep); }, stop);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_EQ(fake.calls, InterferenceOrder(plan));
  EXPECT_FALSE(report->interrupted);
  ASSERT_EQ(report->runs.size(), 20u);
  ASSERT_EQ(report->conditions.size(), 4u);
  for (const IC c : plan.conditions) {
    SCOPED_TRACE(std::string(ConditionName(c)));
    const ConditionResult& r = ResultOf(*report, c);
    EXPECT_EQ(r.runs, 5);
    EXPECT_EQ(r.failed_runs, 0);
    EXPECT_EQ(r.jobs, 5u * 400u);
    EXPECT_DOUBLE_EQ(r.median_exec_ns, MedianByHand(fake.returned[c]));
    ASSERT_EQ(r.repetition_medians_ns.size(), 5u);
    if (c == IC::kIsolated) {
      EXPECT_FALSE(r.has_inflation);
      continue;
    }
    ASSERT_TRUE(r.has_inflation) << r.no_inflation;
    // Against the isolated runs' medians, each run's median computed here from its jobs.
    auto by_run = [&](IC which) {
      std::vector<double> medians;
      const auto& pool = fake.returned[which];
      for (size_t k = 0; k < 5; ++k) {
        medians.push_back(MedianByHand(
            std::vector<int64_t>(pool.begin() + static_cast<ptrdiff_t>(k * 400),
                                 pool.begin() + static_cast<ptrdiff_t>((k + 1) * 400))));
      }
      return medians;
    };
    auto truth = stats::RepetitionInflation(by_run(IC::kIsolated), by_run(c));
    ASSERT_TRUE(truth.has_value());
    EXPECT_EQ(r.inflation.base_n, 5u);
    EXPECT_EQ(r.inflation.cond_n, 5u);
    EXPECT_TRUE(ExactlyEqual(r.inflation.pct, truth->pct));
    EXPECT_TRUE(ExactlyEqual(r.inflation.ci_low_pct, truth->ci_low_pct));
    EXPECT_TRUE(ExactlyEqual(r.inflation.ci_high_pct, truth->ci_high_pct));
    EXPECT_NEAR(r.inflation.pct, 100 * (FactorOf(c) - 1), 0.5);
    // Counters: summed over the runs, per job.
    const size_t cs = static_cast<size_t>(Counter::kContextSwitches);
    EXPECT_TRUE(r.counters[cs].supported);
    EXPECT_EQ(r.counters[cs].value, fake.context_switches[c]);
    EXPECT_EQ(r.counters[cs].value, 5u * 400u + 1 + 2 + 3 + 4 + 5);
    EXPECT_DOUBLE_EQ(r.counters_per_job[cs], static_cast<double>(5 * 400 + 15) / 2000.0);
    const size_t pf = static_cast<size_t>(Counter::kPageFaults);
    EXPECT_EQ(r.counters[pf].value, 15u);
    const size_t ins = static_cast<size_t>(Counter::kInstructions);
    EXPECT_FALSE(r.counters[ins].supported);
    EXPECT_EQ(r.counters[ins].unsupported, "not supported here: no PMU (ENOENT)");
  }
  // Per-run medians in run order.
  const ConditionResult& memory = ResultOf(*report, IC::kMemoryOther);
  size_t k = 0;
  for (const auto& run : report->runs) {
    if (run.condition != IC::kMemoryOther) continue;
    const auto& pool = fake.returned[IC::kMemoryOther];
    const std::vector<int64_t> one(pool.begin() + static_cast<ptrdiff_t>(k * 400),
                                   pool.begin() + static_cast<ptrdiff_t>((k + 1) * 400));
    EXPECT_DOUBLE_EQ(memory.repetition_medians_ns[k], MedianByHand(one));
    EXPECT_DOUBLE_EQ(run.median_exec_ns, MedianByHand(one));
    ++k;
  }
  // 1.31x memory, 1.01x CPU-only: both above 0, memory well separated.
  EXPECT_NE(report->verdict.find("mostly contention in the shared memory system"),
            std::string::npos)
      << report->verdict;
  EXPECT_EQ(report->verdict, InterferenceVerdict(*report));

  const std::string table = FormatInterference(*report);
  for (const IC c : plan.conditions) {
    const ConditionResult& r = ResultOf(*report, c);
    const std::string inflation =
        c == IC::kIsolated ? "baseline" : stats::FormatInflation(r.inflation);
    const std::string row =
        fmt::format("{:<14}{:>7}{:>9}{:>14}  {}", ConditionName(c), 5, 2000,
                    fmt::format("{:.2f} us", r.median_exec_ns / 1000), inflation);
    EXPECT_NE(table.find(row), std::string::npos) << row << "\n" << table;
  }
  EXPECT_NE(table.find(fmt::format("context-switches        {:>14}",
                                   fmt::format("{:.3f}", 2015 / 2000.0))),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("instructions            not supported here: no PMU (ENOENT)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find(report->verdict), std::string::npos);

  const auto json = InterferenceToJson(*report);
  EXPECT_EQ(json["runs"].size(), 20u);
  EXPECT_EQ(json["plan"]["loads"]["memory-other"][0], "memory:cpus=0,2-3,mb=64");
  EXPECT_TRUE(json["conditions"][0]["inflation"].is_null());
  EXPECT_EQ(json["conditions"][2]["name"], "memory-other");
  EXPECT_TRUE(
      ExactlyEqual(json["conditions"][2]["inflation"]["pct"].get<double>(), memory.inflation.pct));
  EXPECT_TRUE(json["conditions"][2]["counters"][0]["value"].is_null());
  EXPECT_EQ(json["conditions"][2]["counters"][6]["value"], fake.context_switches[IC::kMemoryOther]);
  EXPECT_EQ(json["verdict"], report->verdict);
}

TEST(InterferenceTest, StopBetweenRunsGivesAnInterruptedPartialReport) {
  const InterferencePlan plan = FourConditions();
  FakeRuns fake;
  std::atomic<bool> stop{false};
  auto report = RunInterference(
      plan,
      [&](IC c, int rep) {
        auto r = fake(c, rep);
        if (fake.calls.size() == 6) stop = true;  // Ctrl-C during the 6th run.
        return r;
      },
      stop);
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(report->interrupted);
  EXPECT_EQ(fake.calls.size(), 6u);
  EXPECT_EQ(report->runs.size(), 6u);
  EXPECT_EQ(ResultOf(*report, IC::kIsolated).runs, 1);
  EXPECT_EQ(ResultOf(*report, IC::kCpuOther).runs, 2);
  EXPECT_EQ(ResultOf(*report, IC::kMemoryOther).runs, 2);
  EXPECT_EQ(ResultOf(*report, IC::kOwnCpu).runs, 1);
  // One isolated repetition so far: no interval over repetitions, and it says why.
  EXPECT_FALSE(ResultOf(*report, IC::kMemoryOther).has_inflation);
  EXPECT_NE(ResultOf(*report, IC::kMemoryOther)
                .no_inflation.find("baseline has 1 measured repetition(s)"),
            std::string::npos);
  EXPECT_EQ(report->verdict.rfind("partial (6 of 20 runs): ", 0), 0u) << report->verdict;
  EXPECT_NE(FormatInterference(*report).find("interrupted after 6 of 20 runs"), std::string::npos);
  EXPECT_TRUE(InterferenceToJson(*report)["interrupted"].get<bool>());

  // Stopped before the first run: nothing measured, no error, nothing to compare.
  FakeRuns none;
  const std::atomic<bool> stopped{true};
  auto empty = RunInterference(
      plan, [&](IC c, int rep) { return none(c, rep); }, stopped);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->interrupted);
  EXPECT_TRUE(none.calls.empty());
  EXPECT_EQ(ResultOf(*empty, IC::kMemoryOther).jobs, 0u);
  EXPECT_FALSE(ResultOf(*empty, IC::kMemoryOther).has_inflation);
  EXPECT_NE(empty->verdict.find("nothing to compare"), std::string::npos);
  EXPECT_NE(FormatInterference(*empty).find("memory-other        0        0             -  - ("),
            std::string::npos)
      << FormatInterference(*empty);
}

TEST(InterferenceTest, AFailedRunIsRecordedAndTheOthersStillCount) {
  const InterferencePlan plan = FourConditions();
  FakeRuns fake;
  const std::atomic<bool> stop{false};
  auto report = RunInterference(
      plan,
      [&](IC c, int rep) -> Expected<InterferenceRun> {
        if (c == IC::kMemoryOther && rep == 2) return Failure("loads did not start: memory");
        // Too few repetitions for an interval: own-cpu measured only in its first.
        if (c == IC::kOwnCpu && rep > 1) return Failure("loads did not start: own");
        return fake(c, rep);
      },
      stop);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->runs.size(), 20u);
  const ConditionResult& memory = ResultOf(*report, IC::kMemoryOther);
  EXPECT_EQ(memory.runs, 4);
  EXPECT_EQ(memory.failed_runs, 1);
  EXPECT_EQ(memory.jobs, 1600u);
  ASSERT_TRUE(memory.has_inflation);
  // Over the 4 measured repetitions of memory-other and the 5 isolated ones.
  EXPECT_EQ(memory.inflation.cond_n, 4u);
  EXPECT_EQ(memory.inflation.base_n, 5u);
  auto truth = stats::RepetitionInflation(ResultOf(*report, IC::kIsolated).repetition_medians_ns,
                                          memory.repetition_medians_ns);
  ASSERT_TRUE(truth.has_value());
  EXPECT_TRUE(ExactlyEqual(memory.inflation.pct, truth->pct));
  EXPECT_TRUE(ExactlyEqual(memory.inflation.ci_low_pct, truth->ci_low_pct));
  ASSERT_FALSE(report->warnings.empty());
  EXPECT_NE(std::find(report->warnings.begin(), report->warnings.end(),
                      "run 6 of 20 (memory-other, repetition 2) failed: loads did not start: "
                      "memory"),
            report->warnings.end());
  const ConditionResult& own = ResultOf(*report, IC::kOwnCpu);
  EXPECT_FALSE(own.has_inflation);
  EXPECT_NE(own.no_inflation.find("condition has 1 measured repetition(s)"), std::string::npos)
      << own.no_inflation;
  const std::string table = FormatInterference(*report);
  EXPECT_NE(table.find("memory-other      4/5     1600"), std::string::npos) << table;
  EXPECT_NE(table.find("warning: run 6 of 20 (memory-other, repetition 2) failed"),
            std::string::npos);
  EXPECT_EQ(report->verdict.rfind("partial", 0), std::string::npos);

  // Every run failing: the first error, nothing to report.
  auto all_fail = RunInterference(
      plan, [](IC, int) -> Expected<InterferenceRun> { return ResourceError("no SCHED_FIFO"); },
      stop);
  ASSERT_FALSE(all_fail.has_value());
  EXPECT_EQ(all_fail.error().code, ExitCode::kResource);
  EXPECT_EQ(all_fail.error().message, "no SCHED_FIFO");
}

TEST(InterferenceTest, BadPlansAreUsageErrorsNamingTheValue) {
  struct Case {
    std::function<void(InterferencePlan&)> change;
    const char* must_mention;
  };
  const Case cases[] = {
      {[](InterferencePlan& p) { p.other_cpus.clear(); }, "no other CPUs"},
      {[](InterferencePlan& p) {
         p.other_cpus = {0, 1};
       },
       "include the job's CPU 1"},
      {[](InterferencePlan& p) {
         p.conditions = {IC::kCpuOther, IC::kMemoryOther};
       },
       "no 'isolated' baseline"},
      {[](InterferencePlan& p) {
         p.conditions = {IC::kIsolated, IC::kOwnCpu, IC::kOwnCpu};
       },
       "'own-cpu' is given twice"},
      {[](InterferencePlan& p) { p.conditions.clear(); }, "no interference conditions"},
      {[](InterferencePlan& p) { p.repetitions = 0; }, "0 repetitions"},
      {[](InterferencePlan& p) { p.jobs_per_run = 5; }, "5 jobs per run"},
      {[](InterferencePlan& p) { p.work_set_bytes = 1024 * 1024; },
       "work set 1024 KiB is less than twice the last-level cache (2048 KiB)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.must_mention);
    InterferencePlan plan = FourConditions();
    c.change(plan);
    const Status s = ValidateInterferencePlan(plan);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ExitCode::kUsage);
    EXPECT_NE(s.error().message.find(c.must_mention), std::string::npos) << s.error().message;
    int calls = 0;
    const std::atomic<bool> stop{false};
    auto r = RunInterference(
        plan,
        [&](IC, int) -> Expected<InterferenceRun> {
          ++calls;
          return InterferenceRun{};
        },
        stop);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ExitCode::kUsage);
    EXPECT_EQ(calls, 0);
  }
  EXPECT_TRUE(ValidateInterferencePlan(FourConditions()).ok());
}

// The verdict's rules on hand-made intervals.
InterferenceReport WithIntervals(std::optional<std::array<double, 3>> memory,
                                 std::optional<std::array<double, 3>> cpu,
                                 std::optional<std::array<double, 3>> own) {
  InterferenceReport report;
  report.plan = FourConditions();
  report.planned_runs = 20;
  report.runs.resize(20);
  ConditionResult isolated;
  report.conditions.push_back(isolated);
  const std::pair<IC, std::optional<std::array<double, 3>>> given[] = {
      {IC::kCpuOther, cpu}, {IC::kMemoryOther, memory}, {IC::kOwnCpu, own}};
  for (const auto& [c, v] : given) {
    ConditionResult r;
    r.condition = c;
    if (v) {
      r.has_inflation = true;
      r.inflation.pct = (*v)[0];
      r.inflation.ci_low_pct = (*v)[1];
      r.inflation.ci_high_pct = (*v)[2];
    }
    report.conditions.push_back(r);
  }
  return report;
}

TEST(InterferenceTest, VerdictSaysWhatTheIntervalsSupport) {
  using A = std::array<double, 3>;
  struct Case {
    InterferenceReport report;
    std::string want;
  };
  const Case cases[] = {
      {WithIntervals(A{31, 27, 35}, A{1, -1, 3}, A{0.2, -1, 1.5}),
       "exec time +31.0 % [27.0, 35.0] with memory traffic on other CPUs, +1.0 % [-1.0, 3.0] "
       "with CPU-only load there: contention in the shared memory system, not scheduling"},
      {WithIntervals(A{31, 27, 35}, A{4, 2, 6}, A{0, -1, 1}),
       "exec time +31.0 % [27.0, 35.0] with memory traffic on other CPUs, +4.0 % [2.0, 6.0] "
       "with CPU-only load there: mostly contention in the shared memory system, plus a "
       "slow-down from any load on the other CPUs (shared clock or power, or the hypervisor)"},
      {WithIntervals(A{5, 3, 7}, A{4, 2, 6}, std::nullopt),
       "exec time +5.0 % [3.0, 7.0] with memory traffic on other CPUs, +4.0 % [2.0, 6.0] with "
       "CPU-only load there: any load on the other CPUs slows the job, memory traffic no more "
       "than CPU-only load (shared clock or power, or the hypervisor; not the memory system in "
       "particular)"},
      {WithIntervals(A{2, 0.5, 4}, A{1, -1, 3}, std::nullopt),
       "exec time +2.0 % [0.5, 4.0] with memory traffic on other CPUs, +1.0 % [-1.0, 3.0] with "
       "CPU-only load there: probably contention in the shared memory system, but the two "
       "intervals overlap; more repetitions or jobs would separate them"},
      {WithIntervals(A{1, -1, 3}, A{4, 2, 6}, std::nullopt),
       "exec time +1.0 % [-1.0, 3.0] with memory traffic on other CPUs, +4.0 % [2.0, 6.0] with "
       "CPU-only load there: CPU-only load on the other CPUs slows the job and memory traffic "
       "does not (shared clock or power, or the hypervisor)"},
      {WithIntervals(A{0.5, -1, 2}, A{0.1, -1, 1}, A{12, 9, 15}),
       "exec time +12.0 % [9.0, 15.0] with load on its own CPU, nothing measurable from load on "
       "the other CPUs (memory traffic +0.5 % [-1.0, 2.0], CPU-only +0.1 % [-1.0, 1.0]): "
       "scheduling on its own CPU (preemption inside the job, or cache sharing), not the shared "
       "memory system"},
      {WithIntervals(A{31, 27, 35}, A{1, -1, 3}, A{12, 9, 15}),
       "exec time +31.0 % [27.0, 35.0] with memory traffic on other CPUs, +1.0 % [-1.0, 3.0] "
       "with CPU-only load there: contention in the shared memory system, not scheduling; "
       "+12.0 % [9.0, 15.0] with load on its own CPU: scheduling on its own CPU adds to it "
       "(preemption inside the job, or cache sharing)"},
      {WithIntervals(A{0.3, -0.5, 1.1}, A{-0.2, -1, 0.6}, A{0, -0.4, 0.4}),
       "no measurable effect: every interval contains 0 (memory-other +0.3 % [-0.5, 1.1], "
       "cpu-other -0.2 % [-1.0, 0.6], own-cpu +0.0 % [-0.4, 0.4])"},
      {WithIntervals(A{-3, -5, -1}, A{0, -1, 1}, std::nullopt),
       "exec time -3.0 % [-5.0, -1.0] with memory-bandwidth load on the other CPUs: faster than "
       "isolated: a busy machine keeps its CPUs out of deep idle states and at higher clocks (in a "
       "VM, the vCPU stays scheduled)"},
      {WithIntervals(A{40, 30, 50}, std::nullopt, std::nullopt),
       "exec time +40.0 % [30.0, 50.0] with memory traffic on other CPUs (no CPU-only condition "
       "was run, so it is not separated from load on other CPUs as such)"},
      {WithIntervals(std::nullopt, std::nullopt, std::nullopt),
       "nothing to compare: no condition has an inflation against the isolated baseline (see "
       "the table for why)"},
  };
  for (const auto& c : cases) EXPECT_EQ(InterferenceVerdict(c.report), c.want);
  auto partial = WithIntervals(A{31, 27, 35}, A{1, -1, 3}, std::nullopt);
  partial.runs.resize(7);
  partial.interrupted = true;
  EXPECT_EQ(InterferenceVerdict(partial).rfind("partial (7 of 20 runs): exec time +31.0 %", 0), 0u);
}

// interference.json of this release (control --interference --jobs 20 --repetitions 2,
// tests/data/control/interference.json): read back whole, written out the same but for the
// keys the command adds beside the report.
TEST(InterferenceFileTest, AFileOfTheCurrentReleaseReadsBackAndWritesTheSameReport) {
  const std::string path = std::string(RTPULSE_TEST_DATA) + "/control/interference.json";
  auto report = ReadInterferenceFile(path);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->plan.repetitions, 2);
  EXPECT_EQ(report->plan.jobs_per_run, 20u);
  EXPECT_EQ(report->planned_runs, 8);
  ASSERT_EQ(report->runs.size(), 8u);
  ASSERT_EQ(report->conditions.size(), 4u);
  EXPECT_EQ(report->conditions[0].condition, InterferenceCondition::kIsolated);
  EXPECT_FALSE(report->conditions[0].has_inflation);
  EXPECT_TRUE(report->conditions[2].has_inflation);
  uint64_t jobs = 0;
  for (const auto& r : report->runs) jobs += r.measured ? r.jobs : 0;
  uint64_t condition_jobs = 0;
  for (const auto& c : report->conditions) condition_jobs += c.jobs;
  EXPECT_EQ(jobs, condition_jobs);  // the conditions pool their runs' jobs
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str());
  for (const char* added : {"rtpulse_version", "cmdline", "calibration"}) doc.erase(added);
  EXPECT_EQ(InterferenceToJson(*report), doc);
}

// interference.json as the release before the interval over repetitions wrote it (the
// Price & Bonett interval on the pooled jobs, no `df`): still read, its numbers as written.
TEST(InterferenceFileTest, AFileOfThePooledReleaseStillReads) {
  auto report =
      ReadInterferenceFile(std::string(RTPULSE_TEST_DATA) + "/control/interference-pooled.json");
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->conditions.size(), 4u);
  ASSERT_TRUE(report->conditions[2].has_inflation);
  EXPECT_TRUE(ExactlyEqual(report->conditions[2].inflation.df, 0.0));
  EXPECT_GT(report->conditions[2].inflation.cond_n, 2u) << "jobs, as that release counted";
}

TEST(InterferenceFileTest, AMissingOrMistypedFieldIsNamed) {
  const std::string path = std::string(RTPULSE_TEST_DATA) + "/control/interference.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str());
  doc["runs"][3].erase("repetition");
  auto missing = InterferenceFromJson(doc);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "interference.json: field 'runs[3].repetition' is missing");
  doc = nlohmann::json::parse(text.str());
  doc["conditions"][1]["name"] = "noisy";
  auto unknown = InterferenceFromJson(doc);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "interference.json: field 'conditions[1].name' 'noisy' is no condition");
  doc = nlohmann::json::parse(text.str());
  doc["plan"]["cpu"] = "one";
  auto mistyped = InterferenceFromJson(doc);
  ASSERT_FALSE(mistyped);
  EXPECT_EQ(mistyped.error().code, ExitCode::kUsage);
  EXPECT_EQ(mistyped.error().message,
            "interference.json: field 'plan.cpu' is string, not a whole number");
}

}  // namespace
}  // namespace rtpulse::suite
