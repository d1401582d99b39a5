// The explainer on this machine's real tracefs (root): a SCHED_FIFO probe pinned to a CPU,
// a higher-priority SCHED_FIFO hog on the same CPU spinning a known stretch, and the
// explanation of the spike it causes held against the hog's own clock readings.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "support/subprocess.h"
#include "support/tracefs.h"
#include "trace/explainer.h"

namespace rtpulse::trace {
namespace {

bool ExplainRtPinFifo(int cpu, int priority) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<size_t>(cpu), &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) return false;
  sched_param param{};
  param.sched_priority = priority;
  return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
}

constexpr int kPeriods = 1000;
constexpr int64_t kPeriodNs = 1'000'000;
constexpr int64_t kSpinNs = 2'500'000;

/// One run of the experiment: what the test holds the explanation against.
struct HogRun {
  int cpu = 0;
  ExplainPlan plan;
  std::mutex live_mutex;
  std::vector<std::pair<uint64_t, int64_t>> live;  // (seq, when its verdict came)
  std::atomic<int> analysis_policy{-1}, analysis_cpu{-1};
  std::vector<SampleRecord> samples = std::vector<SampleRecord>(kPeriods);
  std::atomic<int> probe_tid{0};
  std::atomic<bool> probe_fifo{false}, hog_fifo{false};
  int hog_tid = 0;
  /// The hog as `chrt -f 60 python3 -c SPIN` forked and exec'd at the spin's time (its pid in
  /// hog_tid), instead of a thread of this process: switched in under this program's name at
  /// SCHED_OTHER, it is renamed twice and changes its policy while it runs.
  bool exec_hog = false;
  int64_t spin_from_ns = 0, spin_to_ns = 0;
  /// The hog's own CPU time over the spin (CLOCK_THREAD_CPUTIME_ID). With the guest's
  /// steal-time accounting (CONFIG_PARAVIRT_TIME_ACCOUNTING) the time the host held the vCPU
  /// is not the thread's, so wall - CPU is what the host took.
  int64_t hog_cpu_ns = 0;
  ExplainSummary summary;
};

/// The exec'd hog: a child pinned to the probe's CPU spins at SCHED_OTHER under this
/// program's name until `at_ns` (so the probe's every sleep switches to it, a switch the
/// trace records with that name and prio 120), then execs `chrt -f 60 python3 -c SPIN`:
/// chrt sets SCHED_FIFO 60 and execs python3, whose start-up and kSpinNs spin hold the probe
/// off. Only system calls between fork and exec (this process has threads).
void ExecTheHog(HogRun& run, int64_t at_ns) {
  const std::string spin =
      "import time\nt = time.monotonic_ns()\nwhile time.monotonic_ns() - t < " +
      std::to_string(kSpinNs) + ": pass\n";
  const char* argv[] = {"/usr/bin/chrt", "-f",   "60", "/usr/bin/python3", "-c",
                        spin.c_str(),    nullptr};
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<size_t>(run.cpu), &set);
  run.spin_from_ns = at_ns;
  const pid_t child = fork();
  if (child == 0) {
    if (sched_setaffinity(0, sizeof(set), &set) != 0) _exit(126);
    while (MonotonicNs() < at_ns) {
    }
    execv(argv[0], const_cast<char* const*>(argv));
    _exit(127);
  }
  ASSERT_GT(child, 0);
  run.hog_tid = child;
  int status = 0;
  waitpid(child, &status, 0);
  run.spin_to_ns = MonotonicNs();
  run.hog_fifo = WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// A SCHED_FIFO probe at 1 ms on `run.cpu` for 1 s, the explainer started beside it, and a
/// FIFO 60 hog that spins kSpinNs across the deadline of period 150.
void RunHogBesideTheProbe(HogRun& run, const std::string& window_dir) {
  const int cpu = run.cpu;
  ExplainPlan& plan = run.plan;
  plan.threshold_ns = 300'000;
  plan.window_dir = window_dir;
  plan.session.cpus = {cpu};
  plan.session.buffer_kb_per_cpu = 2048;
  auto& live_mutex = run.live_mutex;
  auto& live = run.live;
  auto& analysis_policy = run.analysis_policy;
  auto& analysis_cpu = run.analysis_cpu;
  // Started as a command may start it: from a SCHED_FIFO thread pinned to the probe CPU.
  std::unique_ptr<Explainer> explainer;
  bool starter_fifo = false;
  std::thread starter([&] {
    starter_fifo = ExplainRtPinFifo(cpu, 10);
    explainer = Explainer::Start(plan, [&](const Explanation& e, const std::string&) {
      analysis_policy = sched_getscheduler(0);
      analysis_cpu = sched_getcpu();
      std::lock_guard lock(live_mutex);
      live.emplace_back(e.spike.seq, MonotonicNs());
    });
  });
  starter.join();
  ASSERT_TRUE(starter_fifo);
  ASSERT_TRUE(explainer->active()) << explainer->Finish().unavailable_reason;

  auto& samples = run.samples;
  std::atomic<int> published{0};
  auto& probe_tid = run.probe_tid;
  auto& probe_fifo = run.probe_fifo;
  auto& hog_fifo = run.hog_fifo;
  int& hog_tid = run.hog_tid;
  int64_t& spin_from_ns = run.spin_from_ns;
  int64_t& spin_to_ns = run.spin_to_ns;
  const int64_t start_ns = MonotonicNs() + 20'000'000;
  std::thread probe([&] {
    pthread_setname_np(pthread_self(), "rtp-probe");
    probe_fifo = ExplainRtPinFifo(cpu, 50);
    probe_tid = static_cast<int>(syscall(SYS_gettid));
    for (int i = 0; i < kPeriods; ++i) {
      const int64_t deadline_ns = start_ns + i * kPeriodNs;
      const timespec at = ToTimespec(deadline_ns);
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
      SampleRecord& r = samples[static_cast<size_t>(i)];
      r.actual_ns = MonotonicNs();
      r.expected_ns = deadline_ns;
      r.seq = static_cast<uint64_t>(i);
      r.cpu = static_cast<uint16_t>(cpu);
      published.store(i + 1, std::memory_order_release);
    }
  });
  // As the sample writer hands them over while the run goes on: in batches, every 5 ms.
  std::thread writer([&] {
    int fed = 0;
    while (fed < kPeriods) {
      const int now = published.load(std::memory_order_acquire);
      if (now == fed) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      explainer->OnSamples(samples.data() + fed, static_cast<size_t>(now - fed));
      fed = now;
    }
  });
  std::thread hog([&] {
    if (run.exec_hog) {
      ExecTheHog(run, start_ns + 150 * kPeriodNs + kPeriodNs / 2);
      return;
    }
    pthread_setname_np(pthread_self(), "rtp-hog");
    hog_fifo = ExplainRtPinFifo(cpu, 60);
    hog_tid = static_cast<int>(syscall(SYS_gettid));
    // Starts between two deadlines, so the next deadline falls inside the spin.
    const timespec at = ToTimespec(start_ns + 150 * kPeriodNs + kPeriodNs / 2);
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
    timespec cpu_from{}, cpu_to{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_from);
    spin_from_ns = MonotonicNs();
    while (MonotonicNs() - spin_from_ns < kSpinNs) {
    }
    spin_to_ns = MonotonicNs();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_to);
    run.hog_cpu_ns =
        (cpu_to.tv_sec - cpu_from.tv_sec) * 1'000'000'000 + (cpu_to.tv_nsec - cpu_from.tv_nsec);
    // Gives the CPU up at once by blocking (the waiting FIFO probe runs), still at FIFO 60, so
    // every event that names it after the spin says rt 60 too; it exits 50 ms later, outside
    // the window. (A policy change right after the stretch is a known mislabel: the
    // attribution names a task's priority from the first event after the stretch.)
    const timespec rest{0, 50'000'000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &rest, nullptr);
  });
  probe.join();
  hog.join();
  writer.join();
  ASSERT_TRUE(probe_fifo.load() && hog_fifo.load()) << "SCHED_FIFO refused";
  run.summary = explainer->Finish();
  ASSERT_TRUE(run.summary.active);
}

/// The explanation of the spike whose deadline fell inside the hog's spin, or nullptr.
const Explanation* SpikeInTheSpin(const HogRun& run) {
  const auto& all = run.summary.explanations;
  const auto it = std::find_if(all.begin(), all.end(), [&](const Explanation& e) {
    return e.spike.expected_ns > run.spin_from_ns && e.spike.expected_ns < run.spin_to_ns;
  });
  return it == all.end() ? nullptr : &*it;
}

/// The time the host held the vCPU during the hog's spin: its wall time less the hog's CPU
/// time (0 where the guest does not account steal time: nothing is then excused).
int64_t StolenFromTheSpin(const HogRun& run) {
  return std::max<int64_t>(0, run.spin_to_ns - run.spin_from_ns - run.hog_cpu_ns);
}

/// Whether the host kept the experiment from happening: the spike's time is all "unaccounted"
/// with no part for the hog, i.e. the probe's timer interrupt came only after the spin, so no
/// task delayed a woken probe. This VM's host does that two ways: it takes the vCPU (the hog's
/// own clock then falls 1 ms or more behind the wall clock through the spin), or it delivers
/// the guest's timer interrupt milliseconds late while the vCPU runs on (CI saw 2.4 ms with
/// the hog's clock whole). Either way the run shows nothing of the hog and is run again; a
/// run whose interrupt came in time is judged, so an explainer that lost the hog fails.
/// A third way (ci43 saw it): the host holds the vCPU inside an interrupt handler on the hog's
/// CPU, so the trace shows a "local_timer" interrupt of 259 us (they take about 10 us here).
/// That time is rightly the interrupt's, not the hog's, and the hog's share then falls short
/// of the truth by it: such a run is run again too. A softirq that runs long in the hog's
/// context is the same case (ci49 saw BLOCK take 157 us there, the suite's own disk writes
/// beside it): its time is the softirq's, and the run is run again.
bool HostTookTheSpin(const HogRun& run) {
  const Explanation* e = SpikeInTheSpin(run);
  if (e == nullptr) return false;
  int64_t unaccounted_ns = 0;
  bool hog_seen = false;
  for (const Part& p : e->parts) {
    if ((p.kind == CauseKind::kIrq || p.kind == CauseKind::kSoftirq) && p.ns >= 100'000) {
      return true;
    }
    if (p.kind == CauseKind::kThread && p.name.rfind("rtp-hog ", 0) == 0) hog_seen = true;
    unaccounted_ns += p.kind == CauseKind::kUnaccounted ? p.ns : 0;
  }
  return !hog_seen && unaccounted_ns >= run.spin_to_ns - e->spike.expected_ns - 100'000;
}

TEST(ExplainerRtTest, SpikeBehindAFifoHogIsAttributedToTheHog) {
  if (const std::string why = testutil::TracefsUnavailable(); !why.empty()) GTEST_SKIP() << why;
  testutil::TempDir dir;
  // Up to three runs: one in which this VM's host delayed the probe's wake past the whole spin
  // (2.4 ms were seen by CI) or held the vCPU inside an interrupt (HostTookTheSpin) says
  // nothing about the hog. Every other outcome is judged, and so is the third run whatever.
  std::unique_ptr<HogRun> kept;
  for (int attempt = 0; attempt < 3; ++attempt) {
    kept = std::make_unique<HogRun>();
    kept->cpu = std::thread::hardware_concurrency() > 1 ? 1 : 0;
    RunHogBesideTheProbe(*kept, dir.File("windows-" + std::to_string(attempt)));
    if (HasFatalFailure()) return;
    if (!HostTookTheSpin(*kept)) break;
    std::printf(
        "attempt %d: the host held the vCPU through the spin (the probe's timer interrupt came "
        "only after it, or an interrupt handler or softirq took 100 us or more; %lld us of the "
        "hog's spin "
        "stolen); again\n",
        attempt + 1, static_cast<long long>(StolenFromTheSpin(*kept) / 1000));
  }
  const HogRun& run = *kept;
  const int cpu = run.cpu;
  const ExplainPlan& plan = run.plan;
  const auto& samples = run.samples;
  const auto& live = run.live;
  const ExplainSummary& summary = run.summary;
  const int64_t spin_from_ns = run.spin_from_ns;
  const int64_t spin_to_ns = run.spin_to_ns;
  const int hog_tid = run.hog_tid;
  const auto& probe_tid = run.probe_tid;
  const auto& analysis_policy = run.analysis_policy;
  const auto& analysis_cpu = run.analysis_cpu;

  // The spikes, counted by the test from the same samples.
  uint64_t above = 0;
  for (const SampleRecord& r : samples) above += LatencyNs(r) > plan.threshold_ns ? 1U : 0U;
  EXPECT_EQ(summary.spikes_seen, above);
  EXPECT_EQ(summary.spikes_explained, above) << "well below max_explained";
  EXPECT_EQ(live.size(), above);
  EXPECT_EQ(analysis_policy.load(), SCHED_OTHER) << "the analysis thread is not real-time";
  if (std::thread::hardware_concurrency() > 1) {
    EXPECT_NE(analysis_cpu.load(), cpu) << "the analysis thread ran on the probe's CPU";
  }

  // The spike whose deadline fell inside the spin (others may come from the VM's host).
  const auto it = std::find_if(
      summary.explanations.begin(), summary.explanations.end(), [&](const Explanation& e) {
        return e.spike.expected_ns > spin_from_ns && e.spike.expected_ns < spin_to_ns;
      });
  ASSERT_NE(it, summary.explanations.end()) << "no spike inside the hog's spin";
  const Explanation& e = *it;
  int64_t sum_ns = 0;
  for (const Part& p : e.parts) sum_ns += p.ns;
  EXPECT_EQ(sum_ns, e.lateness_ns);
  EXPECT_EQ(e.lateness_ns, e.spike.actual_ns - e.spike.expected_ns);
  EXPECT_EQ(e.probe_tid, probe_tid.load());
  // Ground truth: the hog held the CPU from the deadline to the end of its spin (and the
  // few us of its sched_setscheduler call).
  const int64_t truth_ns = spin_to_ns - e.spike.expected_ns;
  const std::string hog_name = "rtp-hog " + std::to_string(hog_tid) + " ";
  const auto hog_part = std::find_if(e.parts.begin(), e.parts.end(), [&](const Part& p) {
    return p.kind == CauseKind::kThread && p.name.rfind(hog_name, 0) == 0;
  });
  std::string parts;
  for (const Part& p : e.parts) {
    parts += std::string(CauseKindName(p.kind)) + " " + p.name + " " + std::to_string(p.ns) + "\n";
  }
  ASSERT_NE(hog_part, e.parts.end()) << parts;
  // The hog's share is the truth within 100 us. A host stall the trace cannot see into (this
  // VM's host takes the vCPU for milliseconds under load, a sanitizer stage's build lane
  // beside it) is "unaccounted", never the hog's: the hog's share then falls short of the
  // truth by at most that part, and is never above it.
  int64_t unaccounted_ns = 0;
  for (const Part& p : e.parts) unaccounted_ns += p.kind == CauseKind::kUnaccounted ? p.ns : 0;
  EXPECT_LE(hog_part->ns, truth_ns + 100'000) << parts;
  EXPECT_GE(hog_part->ns + unaccounted_ns, truth_ns - 100'000) << parts;
  EXPECT_NE(hog_part->name.find(" rt 60"), std::string::npos) << hog_part->name;
  EXPECT_EQ(e.parts.front().name, hog_part->name) << "the largest part";
  // Its verdict came while the run went on (the hog ran at 150 ms of a 1 s run).
  const auto verdict =
      std::find_if(live.begin(), live.end(), [&](const auto& v) { return v.first == e.spike.seq; });
  ASSERT_NE(verdict, live.end());
  EXPECT_LT(verdict->second, samples.back().actual_ns) << "explained only after the run";

  // The next deadline passed inside the spin too, before the probe had woken: that spike is
  // marked as carried from this one.
  EXPECT_NE(std::find_if(summary.notes.begin(), summary.notes.end(),
                         [](const std::string& n) {
                           return n.find(
                                      "due before the probe had woken for the previous "
                                      "period") != std::string::npos;
                         }),
            summary.notes.end());

  // Its raw window: the header, then ftrace text with the hog's switch to the probe.
  ASSERT_FALSE(e.window_file.empty());
  const std::string text = testutil::ReadFile(e.window_file);
  EXPECT_EQ(text.rfind("# rtpulse --explain spike ", 0), 0U) << text.substr(0, 200);
  EXPECT_NE(text.find("sched_switch"), std::string::npos);
  EXPECT_NE(text.find("rtp-hog"), std::string::npos);
  EXPECT_NE(text.find("rtp-probe"), std::string::npos);
  EXPECT_EQ(summary.trace.instance, "rtpulse-" + std::to_string(getpid()));
  EXPECT_FALSE(std::filesystem::exists(std::string(testutil::kTracefsDir) + "/instances/" +
                                       summary.trace.instance))
      << "Finish removes the instance";
}

// docs/explain.md: a thread is named as it was at the spike. `chrt -f 60 python3 ...` is
// switched in under this program's name at SCHED_OTHER, renamed to chrt and then python3 by
// its execs, and set to SCHED_FIFO 60 by chrt, all while it runs: the largest part naming it
// (python3's start-up and spin, milliseconds) is "python3 PID rt 60", and every part under
// an exec'd name says rt 60. (Before the exec it was SCHED_OTHER under this program's name,
// which a host stall can show in a spike of its own.)
TEST(ExplainerRtTest, AHogExecdUnderChrtIsNamedAsItRanAtTheSpike) {
  if (const std::string why = testutil::TracefsUnavailable(); !why.empty()) GTEST_SKIP() << why;
  if (access("/usr/bin/chrt", X_OK) != 0 || access("/usr/bin/python3", X_OK) != 0) {
    GTEST_SKIP() << "needs /usr/bin/chrt and /usr/bin/python3";
  }
  testutil::TempDir dir;
  // Up to three runs: one whose host held the vCPU through the whole hog names nothing.
  std::unique_ptr<HogRun> kept;
  std::vector<Part> named;
  for (int attempt = 0; attempt < 3 && named.empty(); ++attempt) {
    kept = std::make_unique<HogRun>();
    kept->cpu = std::thread::hardware_concurrency() > 1 ? 1 : 0;
    kept->exec_hog = true;
    RunHogBesideTheProbe(*kept, dir.File("windows-" + std::to_string(attempt)));
    if (HasFatalFailure()) return;
    const std::string pid = " " + std::to_string(kept->hog_tid) + " ";
    for (const Explanation& e : kept->summary.explanations) {
      for (const Part& p : e.parts) {
        if (p.kind == CauseKind::kThread && p.name.find(pid) != std::string::npos) {
          named.push_back(p);
        }
      }
    }
  }
  const std::string pid = std::to_string(kept->hog_tid);
  ASSERT_FALSE(named.empty()) << "no part named the hog (pid " << pid << ") in three runs";
  std::string all;
  for (const Part& p : named) all += p.name + " " + std::to_string(p.ns) + " ns\n";
  const auto largest = std::max_element(named.begin(), named.end(),
                                        [](const Part& a, const Part& b) { return a.ns < b.ns; });
  EXPECT_EQ(largest->name, "python3 " + pid + " rt 60") << all;
  for (const Part& p : named) {
    if (p.name.rfind("python3 ", 0) == 0 || p.name.rfind("chrt ", 0) == 0) {
      EXPECT_TRUE(p.name.ends_with(" " + pid + " rt 60")) << all;
    }
  }
}

}  // namespace
}  // namespace rtpulse::trace
