// ThreadCounters without root: names, the calls out of order, and hardware counters agreeing
// with what the kernel says when the test asks it directly.
#include "measure/perf_counters.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace rtpulse::measure {
namespace {

CounterReading ReadingOf(const std::vector<CounterReading>& all, Counter counter) {
  for (const auto& r : all) {
    if (r.counter == counter) return r;
  }
  ADD_FAILURE() << "no reading for " << CounterName(counter);
  return {};
}

std::string ParanoidFromProc() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  in >> level;
  return level;
}

/// The kernel's own answer to perf_event_open for a software counter of this thread, asked
/// here directly: 0 when it opens, else errno (ENOSYS where there are no perf events at all,
/// as under qemu-user, the arm64 CI stage).
int IndependentPerfErrno() {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_SW_PAGE_FAULTS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    return 0;
  }
  return errno;
}

TEST(PerfCountersTest, NamesArePerfsAndHardwareIsMarked) {
  EXPECT_EQ(CounterName(Counter::kInstructions), "instructions");
  EXPECT_EQ(CounterName(Counter::kCacheMisses), "cache-misses");
  EXPECT_EQ(CounterName(Counter::kStalledCyclesBackend), "stalled-cycles-backend");
  EXPECT_EQ(CounterName(Counter::kContextSwitches), "context-switches");
  EXPECT_EQ(CounterName(Counter::kCpuMigrations), "cpu-migrations");
  EXPECT_EQ(CounterName(Counter::kPageFaults), "page-faults");
  int hardware = 0;
  for (const Counter c : kAllCounters) hardware += IsHardwareCounter(c) ? 1 : 0;
  EXPECT_EQ(hardware, 6);
  EXPECT_FALSE(IsHardwareCounter(Counter::kPageFaults));
}

TEST(PerfCountersTest, ReadBeforeOpenReportsEveryCounterNotOpened) {
  ThreadCounters counters;
  counters.Enable();  // No-ops, no crash.
  counters.Disable();
  const auto all = counters.Read();
  ASSERT_EQ(all.size(), std::size(kAllCounters));
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].counter, kAllCounters[i]);
    EXPECT_FALSE(all[i].supported);
    EXPECT_EQ(all[i].value, 0u);
    EXPECT_NE(all[i].unsupported.find("not opened"), std::string::npos);
  }
}

TEST(PerfCountersTest, ASecondOpenIsAnErrorAndKeepsTheFirst) {
  ThreadCounters counters;
  ASSERT_TRUE(counters.Open()) << "perf events unavailable";
  EXPECT_TRUE(counters.is_open());
  const Status again = counters.Open();
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("already open"), std::string::npos);
  EXPECT_TRUE(counters.is_open());
  counters.Enable();
  std::vector<char> pages(1 << 20, 1);  // Some page faults, in user mode at least.
  counters.Disable();
  if (IndependentPerfErrno() == ENOSYS) {
    // No perf events at all: Open() succeeds and every counter says why it has no value.
    for (const auto& r : counters.Read()) {
      EXPECT_FALSE(r.supported) << CounterName(r.counter);
      EXPECT_EQ(r.unsupported, "not supported here: this kernel has no perf events (ENOSYS)")
          << CounterName(r.counter);
    }
    return;
  }
  const auto faults = ReadingOf(counters.Read(), Counter::kPageFaults);
  if (!faults.supported && faults.unsupported.rfind("not permitted: ", 0) == 0) {
    GTEST_SKIP() << "perf_event_open refused here (a seccomp filter?): " << faults.unsupported;
  }
  EXPECT_TRUE(faults.supported) << faults.unsupported;
  EXPECT_GT(faults.value, 0u);
  EXPECT_EQ(pages[4096], 1);
}

TEST(PerfCountersTest, AThreadThatDoesNotExistIsAnError) {
  if (IndependentPerfErrno() == ENOSYS) {
    GTEST_SKIP() << "perf_event_open is not implemented here (ENOSYS, e.g. qemu-user): nothing "
                    "can tell that a thread does not exist";
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  ThreadCounters counters;
  const Status s = counters.Open(child);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("thread " + std::to_string(child) + " does not exist"),
            std::string::npos)
      << s.error().message;
  EXPECT_NE(s.error().message.find("ESRCH"), std::string::npos);
  EXPECT_FALSE(counters.is_open());
  EXPECT_FALSE(counters.Read()[0].supported);
}

/// The kernel's own answer for instructions of this thread, asked here directly (user mode,
/// which any paranoid level below 3 allows for one's own thread).
int IndependentInstructionsErrno() {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    return 0;
  }
  return errno;
}

TEST(PerfCountersTest, HardwareCountersAreCountedOrUnsupportedWithTheKernelsReason) {
  const int err = IndependentInstructionsErrno();
  ThreadCounters counters;
  ASSERT_TRUE(counters.Open());
  counters.Enable();
  volatile uint64_t sum = 0;
  constexpr uint64_t kLoops = 1'000'000;
  for (uint64_t i = 0; i < kLoops; ++i) sum = sum + i;  // >= 1 instruction per loop.
  counters.Disable();
  const auto all = counters.Read();
  const auto instructions = ReadingOf(all, Counter::kInstructions);
  if (err == 0) {
    ASSERT_TRUE(instructions.supported) << instructions.unsupported;
    EXPECT_GE(instructions.value, kLoops);
    return;
  }
  EXPECT_FALSE(instructions.supported);
  EXPECT_EQ(instructions.value, 0u);
  if (err == EACCES || err == EPERM) {
    EXPECT_NE(instructions.unsupported.find("not permitted: perf_event_paranoid is " +
                                            ParanoidFromProc()),
              std::string::npos)
        << instructions.unsupported;
  } else {
    EXPECT_EQ(instructions.unsupported.rfind("not supported here: ", 0), 0u)
        << instructions.unsupported;
    const std::string name = err == ENOENT       ? "ENOENT"
                             : err == EOPNOTSUPP ? "EOPNOTSUPP"
                             : err == ENODEV     ? "ENODEV"
                                                 : "ENOSYS";
    EXPECT_NE(instructions.unsupported.find("(" + name + ")"), std::string::npos)
        << instructions.unsupported;
  }
  // Without a PMU no hardware counter is offered, and each says why.
  if (err == ENOENT) {
    for (const auto& r : all) {
      if (!IsHardwareCounter(r.counter)) continue;
      EXPECT_FALSE(r.supported) << CounterName(r.counter);
      EXPECT_FALSE(r.unsupported.empty()) << CounterName(r.counter);
    }
  }
}

}  // namespace
}  // namespace rtpulse::measure
