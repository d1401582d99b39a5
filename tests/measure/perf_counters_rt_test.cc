// ThreadCounters counting real events of real threads against known ground truth: sleeps,
// fresh pages, forced migrations. Kernel-mode counting needs root (or perf_event_paranoid <= 1).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "measure/perf_counters.h"

namespace rtpulse::measure {
namespace {

int ParanoidLevelNow() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int level = 3;
  in >> level;
  return level;
}

#define SKIP_UNLESS_KERNEL_COUNTING()                                                  \
  if (geteuid() != 0 && ParanoidLevelNow() >= 2)                                       \
  GTEST_SKIP() << "counting kernel events needs root or perf_event_paranoid <= 1 (is " \
               << ParanoidLevelNow() << ")"

CounterReading CounterOf(const std::vector<CounterReading>& all, Counter counter) {
  for (const auto& r : all) {
    if (r.counter == counter) return r;
  }
  ADD_FAILURE() << "no reading for " << CounterName(counter);
  return {};
}

TEST(PerfCountersRtTest, ContextSwitchesOfAnotherThreadThatSleeps20Times) {
  SKIP_UNLESS_KERNEL_COUNTING();
  std::atomic<pid_t> tid{0};
  std::atomic<int> phase{0};  // 1: go, 2: slept, 3: may exit.
  std::thread sleeper([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    while (phase.load() < 1) std::this_thread::sleep_for(std::chrono::microseconds(100));
    for (int i = 0; i < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    phase = 2;
    while (phase.load() < 3) std::this_thread::sleep_for(std::chrono::microseconds(100));
  });
  while (tid.load() == 0) std::this_thread::yield();
  ThreadCounters counters;
  const Status s = counters.Open(tid.load());
  ASSERT_TRUE(s.ok()) << s.error().message;
  counters.Enable();
  phase = 1;
  while (phase.load() < 2) std::this_thread::sleep_for(std::chrono::microseconds(200));
  counters.Disable();
  const auto all = counters.Read();
  phase = 3;
  sleeper.join();
  const auto cs = CounterOf(all, Counter::kContextSwitches);
  ASSERT_TRUE(cs.supported) << cs.unsupported;
  EXPECT_FALSE(cs.user_only);
  EXPECT_GE(cs.value, 20u);
}

TEST(PerfCountersRtTest, PageFaultsAtLeastTheFreshPagesTouched) {
  SKIP_UNLESS_KERNEL_COUNTING();
  constexpr size_t kPages = 64;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* map =
      mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  madvise(map, kPages * page, MADV_NOHUGEPAGE);  // One fault per page, not one per 2 MiB.
  ThreadCounters counters;
  ASSERT_TRUE(counters.Open());
  counters.Enable();
  auto* bytes = static_cast<volatile char*>(map);
  for (size_t i = 0; i < kPages; ++i) bytes[i * page] = 1;
  counters.Disable();
  const auto faults = CounterOf(counters.Read(), Counter::kPageFaults);
  munmap(map, kPages * page);
  ASSERT_TRUE(faults.supported) << faults.unsupported;
  EXPECT_GE(faults.value, kPages);
  EXPECT_LT(faults.value, 10 * kPages);  // This thread did little else while counting.
}

TEST(PerfCountersRtTest, MigrationsCountForcedMoves) {
  SKIP_UNLESS_KERNEL_COUNTING();
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof original, &original), 0);
  std::vector<int> cpus;
  for (size_t c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &original)) cpus.push_back(static_cast<int>(c));
  }
  ThreadCounters counters;
  ASSERT_TRUE(counters.Open());
  constexpr int kMoves = 10;
  counters.Enable();
  if (cpus.size() >= 2) {
    for (int i = 0; i < kMoves; ++i) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(static_cast<size_t>(cpus[static_cast<size_t>(i % 2)]), &one);
      ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
      ASSERT_EQ(sched_getcpu(), cpus[static_cast<size_t>(i % 2)]);
    }
  }
  counters.Disable();
  ASSERT_EQ(sched_setaffinity(0, sizeof original, &original), 0);
  const auto moves = CounterOf(counters.Read(), Counter::kCpuMigrations);
  ASSERT_TRUE(moves.supported) << moves.unsupported;
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed: the counter opens, nothing to move";
  // The first move may find the thread already on cpus[0].
  EXPECT_GE(moves.value, static_cast<uint64_t>(kMoves - 1));
}

// An unprivileged thread under perf_event_paranoid >= 2: kernel-mode counting is refused, so
// page faults are counted in user mode only and context switches are "not permitted" with the
// paranoid level and the fix (never a false 0).
TEST(PerfCountersRtTest, UnprivilegedCountingSaysWhatTheKernelRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to drop to another user";
  const int paranoid = ParanoidLevelNow();
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    auto fail = [&](const std::string& why) {
      (void)!write(pipe_fds[1], why.data(), why.size());
      _exit(1);
    };
    if (setgid(65534) != 0 || setuid(65534) != 0) fail("setuid(65534) failed");
    ThreadCounters counters;
    if (Status s = counters.Open(); !s) fail(s.error().message);
    counters.Enable();
    std::vector<char> touched(1 << 20, 1);
    counters.Disable();
    const auto all = counters.Read();
    const auto cs = CounterOf(all, Counter::kContextSwitches);
    const auto faults = CounterOf(all, Counter::kPageFaults);
    if (!faults.supported || faults.value == 0) fail("page faults: " + faults.unsupported);
    if (paranoid >= 2) {
      const std::string want = "not permitted: perf_event_paranoid is " + std::to_string(paranoid);
      if (cs.supported) fail("context switches counted although kernel mode is refused");
      if (cs.unsupported.rfind(want, 0) != 0 || cs.unsupported.find("fix:") == std::string::npos)
        fail("context switches: " + cs.unsupported);
      if (!faults.user_only) fail("page faults not marked user-only");
    } else if (!cs.supported || faults.user_only) {
      fail("paranoid " + std::to_string(paranoid) + " but: " + cs.unsupported);
    }
    _exit(touched[7] == 1 ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) message.append(buf, buf + n);
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << message;
}

}  // namespace
}  // namespace rtpulse::measure
