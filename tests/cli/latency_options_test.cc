// The option-to-plan mapping of `rtpulse latency` against the real cyclictest: every line of
// tests/data/cyclictest-intervals/intervals.txt (recorded from cyclictest 2.40 on 2 CPUs)
// goes through rtpulse's own option parser and BuildLatencyPlan with online CPUs 0-1, and the
// plan must have the threads and intervals cyclictest configured.
#include "cli/latency_options.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "cli/cyclictest_intervals.h"
#include "core/clock.h"
#include "core/exit_code.h"
#include "measure/gpio.h"
#include "measure/wake_clock.h"
#include "measure/wake_path.h"
#include "trace/session.h"

namespace rtpulse::cli {
namespace {

const std::vector<int> kOnlineCpus = {0, 1};  // the machine the table was recorded on

using testutil::HasFlag;
using testutil::IntervalRow;
using testutil::ReadIntervalTable;

Expected<measure::LatencyPlan> PlanFor(const std::string& flags) {
  CLI::App app("latency");
  LatencyOptions o;
  DeclareLatencyOptions(app, o);
  app.allow_extras(false);
  try {
    app.parse(flags, false);
  } catch (const CLI::ParseError& e) {
    return UsageError(std::string("parse: ") + e.what());
  }
  NoteGivenOptions(app, o);
  return BuildLatencyPlan(o, kOnlineCpus);
}

std::vector<int64_t> IntervalsUs(const measure::LatencyPlan& plan) {
  std::vector<int64_t> out;
  for (const auto& t : plan.threads) out.push_back(t.interval_ns / kNsPerUs);
  return out;
}

bool HasNote(const measure::LatencyPlan& plan, const std::string& start) {
  return std::any_of(plan.notes.begin(), plan.notes.end(),
                     [&](const std::string& n) { return n.rfind(start, 0) == 0; });
}

TEST(LatencyOptionsTest, TheTableCoversEveryRuleAndComesFromTheRecording) {
  const auto rows = ReadIntervalTable();
  ASSERT_GE(rows.size(), 25u) << "tests/data/cyclictest-intervals/intervals.txt not read";
  // The rows that tell the old rule (no distance with -S, distance kept with -h) apart.
  auto find = [&](const std::string& flags) {
    return std::find_if(rows.begin(), rows.end(),
                        [&](const IntervalRow& r) { return r.flags == flags; });
  };
  ASSERT_NE(find("-S -i1000"), rows.end());
  EXPECT_EQ(find("-S -i1000")->intervals_us, (std::vector<int64_t>{1000, 1500}));
  ASSERT_NE(find("-t2 -i1000 -h50"), rows.end());
  EXPECT_EQ(find("-t2 -i1000 -h50")->intervals_us, (std::vector<int64_t>{1000, 1000}));
}

TEST(LatencyOptionsTest, EveryFlagCombinationPlansCyclictestsThreadsAndIntervals) {
  for (const IntervalRow& row : ReadIntervalTable()) {
    SCOPED_TRACE("intervals.txt line " + std::to_string(row.line) + ": cyclictest " + row.flags);
    auto plan = PlanFor(row.flags);
    ASSERT_TRUE(plan) << plan.error().message;
    if (row.intervals_us.empty()) {
      // cyclictest refuses -a before -S; rtpulse runs -S's threads and says -a was ignored.
      ASSERT_TRUE(HasFlag(row, "-S") && HasFlag(row, "-a")) << "unexpected refusal";
      EXPECT_EQ(IntervalsUs(*plan), (std::vector<int64_t>{1000, 1500}));
      EXPECT_TRUE(HasNote(*plan, "-a ignored")) << "no note for the ignored -a";
      continue;
    }
    EXPECT_EQ(IntervalsUs(*plan), row.intervals_us);
    if (HasFlag(row, "-S")) {
      // One thread pinned on each online CPU, in order.
      ASSERT_EQ(plan->threads.size(), kOnlineCpus.size());
      for (size_t i = 0; i < plan->threads.size(); ++i) {
        EXPECT_EQ(plan->threads[i].cpu, kOnlineCpus[i]) << "thread " << i;
      }
      EXPECT_EQ(HasNote(*plan, "-t ignored"), HasFlag(row, "-t"));
      EXPECT_EQ(HasNote(*plan, "-a ignored"), HasFlag(row, "-a"));
    }
    const bool histogram = HasFlag(row, "-h") || HasFlag(row, "-H");
    EXPECT_EQ(HasNote(*plan, "-d "), histogram && HasFlag(row, "-d")) << "the -d note";
  }
}

TEST(LatencyOptionsTest, TheIgnoredDistanceIsNamedInTheNote) {
  auto plan = PlanFor("-t2 -i1000 -h50 -d200");
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->notes.size(), 1u);
  EXPECT_EQ(plan->notes[0],
            "-d 200 ignored: with -h/-H every thread runs at the -i interval (as cyclictest "
            "does)");
}

TEST(LatencyOptionsTest, DistanceIsAddedPerThreadIndexBeyondTheCpuCount) {
  // Five threads round robin on two CPUs: the distance follows the thread index, not the CPU.
  auto plan = PlanFor("-a 0,1 -t5 -i100 -d" + std::to_string(kDefaultDistanceUs / 5));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->threads.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(plan->threads[i].interval_ns, (100 + 100 * static_cast<int64_t>(i)) * kNsPerUs);
    EXPECT_EQ(plan->threads[i].cpu, static_cast<int>(i % 2));
  }
}

TEST(LatencyOptionsTest, ANegativeDistanceIsRefusedNamingTheValue) {
  auto plan = PlanFor("-t2 -d -5");
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ExitCode::kUsage);
  EXPECT_NE(plan.error().message.find("-d -5"), std::string::npos) << plan.error().message;
}

TEST(LatencyOptionsTest, WakeGpioPlansOneProbeOnTheLine) {
  auto plan = PlanFor("--wake gpio:gpiochip0:17 -i 20000");
  if (!measure::GpioCompiledIn()) {
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, ExitCode::kResource);
    EXPECT_NE(plan.error().message.find("libgpiod-dev"), std::string::npos);
    return;
  }
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->paths, (std::vector<measure::WakePath>{measure::WakePath::kGpio}));
  EXPECT_EQ(plan->gpio_wake, "gpio:gpiochip0:17");
  EXPECT_EQ(plan->gpio_drive, "");
  ASSERT_EQ(plan->threads.size(), 1u);
  EXPECT_EQ(plan->threads[0].interval_ns, 20'000'000);

  plan = PlanFor("--wake gpio:pinctrl-rp1:GPIO17 --wake-drive gpio:pinctrl-rp1:GPIO27");
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->gpio_wake, "gpio:pinctrl-rp1:GPIO17");
  EXPECT_EQ(plan->gpio_drive, "gpio:pinctrl-rp1:GPIO27");
}

TEST(LatencyOptionsTest, WakeGpioMistakesAreUsageErrorsWithTheFix) {
  struct Case {
    const char* flags;
    const char* says;
  };
  for (const Case& c :
       {Case{"--wake gpio", "--wake gpio:CHIP:LINE"},
        Case{"--wake abs,gpio:gpiochip0:1", "runs alone"},
        Case{"--wake gpio:gpiochip0:1,abs", "runs alone"},
        Case{"--wake gpio:gpiochip0", "gpio:CHIP:LINE"},
        Case{"--wake gpio:gpiochip0:1 -t 2", "add -t 1"},
        Case{"--wake gpio:gpiochip0:1 -S", "add -t 1"},
        Case{"--wake-drive gpio:gpiochip0:2", "needs --wake gpio:CHIP:LINE"},
        Case{"--wake timerfd --wake-drive gpio:gpiochip0:2", "needs --wake gpio"},
        Case{"--wake gpio:gpiochip0:1 --wake-drive gpio:gpiochip0:1", "the input line itself"},
        Case{"--wake gpio:gpiochip0:1 --wake-drive gpiochip0:2", "--wake-drive"}}) {
    SCOPED_TRACE(c.flags);
    auto plan = PlanFor(c.flags);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, ExitCode::kUsage) << plan.error().message;
    EXPECT_NE(plan.error().message.find(c.says), std::string::npos) << plan.error().message;
  }
}

// An unknown path lists every path this build has: the table's, then timerlat and the gpio
// path where the build has them (and only then).
TEST(LatencyOptionsTest, AnUnknownWakePathListsEveryPathTheBuildHas) {
  auto plan = PlanFor("--wake timrefd");
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ExitCode::kUsage);
  const std::string& says = plan.error().message;
  EXPECT_NE(says.find("unknown wake path 'timrefd': did you mean 'timerfd'?"), std::string::npos)
      << says;
  for (const auto path : measure::kAllWakePaths) {
    EXPECT_NE(says.find(std::string(measure::WakePathName(path))), std::string::npos) << says;
  }
  EXPECT_EQ(says.find("timerlat") != std::string::npos, trace::TracingCompiledIn()) << says;
  EXPECT_EQ(says.find("gpio:CHIP:LINE") != std::string::npos, measure::GpioCompiledIn()) << says;
}

TEST(LatencyOptionsTest, TheTimerPathsLeaveTheGpioLinesEmpty) {
  auto plan = PlanFor("--wake all -t 1");
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->gpio_wake, "");
  EXPECT_EQ(std::count(plan->paths.begin(), plan->paths.end(), measure::WakePath::kGpio), 0);
}

// cyclictest's -s: nanosleep(2), the relative path; -x alongside is dropped with a note (as
// cyclictest warns and does); with --wake it conflicts like -r.
TEST(LatencyOptionsTest, SystemSleepIsTheRelativePath) {
  auto plan = PlanFor("-s -t 1");
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->paths, std::vector<measure::WakePath>{measure::WakePath::kRel});
  auto with_x = PlanFor("-s -x -t 1");
  ASSERT_TRUE(with_x) << with_x.error().message;
  EXPECT_EQ(with_x->paths, std::vector<measure::WakePath>{measure::WakePath::kRel});
  EXPECT_TRUE(HasNote(*with_x, "-x ignored")) << ::testing::PrintToString(with_x->notes);
  auto with_wake = PlanFor("-s --wake abs");
  ASSERT_FALSE(with_wake);
  EXPECT_EQ(with_wake.error().code, ExitCode::kUsage);
  EXPECT_NE(with_wake.error().message.find("-s"), std::string::npos) << with_wake.error().message;
}

// -c: cyclictest's numbers and the names, each to its clock id; the plan keeps it.
TEST(LatencyOptionsTest, ClockNamesAndNumbersPickTheClock) {
  struct Case {
    const char* flags;
    clockid_t clock;
  };
  for (const Case& c :
       {Case{"-c 0", CLOCK_MONOTONIC}, Case{"-c 1", CLOCK_REALTIME},
        Case{"--clock monotonic", CLOCK_MONOTONIC}, Case{"--clock=realtime", CLOCK_REALTIME},
        Case{"-c boottime", CLOCK_BOOTTIME}, Case{"-c tai -x", CLOCK_TAI},
        Case{"-c realtime -r", CLOCK_REALTIME}}) {
    SCOPED_TRACE(c.flags);
    auto plan = PlanFor(std::string(c.flags) + " -t 1");
    ASSERT_TRUE(plan) << plan.error().message;
    EXPECT_EQ(plan->wake_clock, c.clock);
  }
}

// Each new cyclictest option's bad values: one usage error naming the value and the fix.
TEST(LatencyOptionsTest, CyclictestModeMistakesAreUsageErrorsWithTheFix) {
  struct Case {
    const char* flags;
    const char* says;
  };
  for (const Case& c : {Case{"-c 2", "not a clock"}, Case{"-c aux8", "aux0..aux7"},
                        Case{"-c realtime --wake timerfd", "--wake timerfd sleeps on"},
                        Case{"-c 1 --wake abs,epoll", "--wake epoll"}, Case{"-o 10", "add -v"},
                        Case{"-o 0 -v", "1 or more"}, Case{"--smi -t 2", "must be pinned"},
                        Case{"--deepest-idle-state -2 -t 1", "-1 to disable every state"}}) {
    SCOPED_TRACE(c.flags);
    auto plan = PlanFor(c.flags);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, ExitCode::kUsage) << plan.error().message;
    EXPECT_NE(plan.error().message.find(c.says), std::string::npos) << plan.error().message;
  }
}

// A clock this kernel lacks (an auxiliary clock before Linux 6.17, or one not enabled) is a
// resource error that says what the kernel needs.
TEST(LatencyOptionsTest, AnAuxiliaryClockTheKernelLacksSaysWhatItNeeds) {
  timespec now{};
  if (clock_gettime(measure::kFirstAuxClock, &now) == 0) {
    GTEST_SKIP() << "this kernel has auxiliary clock 0 enabled";
  }
  auto plan = PlanFor("-c aux0 -t 1");
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ExitCode::kResource) << plan.error().message;
  EXPECT_NE(plan.error().message.find("aux_clocks/0/aux_clock_enable"), std::string::npos)
      << plan.error().message;
}

// --smi with pinned threads asks the engine to count; -S pins.
TEST(LatencyOptionsTest, SmiCountingNeedsPinnedThreadsAndIsPlanned) {
  auto plan = PlanFor("--smi -S");
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->count_smis);
  auto off = PlanFor("-S");
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_FALSE(off->count_smis);
}

}  // namespace
}  // namespace rtpulse::cli
