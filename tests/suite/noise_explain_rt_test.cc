// rtpulse noise --explain on this machine's real tracefs (root): a thread of the test, named
// and at SCHED_FIFO above the poller on its CPU, takes the CPU for known spans; each span's
// event must name that thread with at least the span's time (the trace sees it switched in
// before its first clock read and out after its last; interrupts in between are theirs), and
// every explained event's parts must add up to its gap. Asserts ground truth and structure, never
// raw noise sizes.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

#include "core/clock.h"
#include "core/cpus.h"
#include "suite/noise_plan.h"
#include "support/cpu_taker.h"
#include "support/subprocess.h"
#include "support/tracefs.h"

namespace rtpulse::suite {
namespace {

/// Waits until a thread of this process is named rtpulse-noise (the poller), up to `limit_ns`.
bool PollerAppears(int64_t limit_ns) {
  const int64_t until = MonotonicNs() + limit_ns;
  while (MonotonicNs() < until) {
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      std::ifstream comm(task.path() / "comm");
      std::string name;
      if (std::getline(comm, name) && name == "rtpulse-noise") return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(NoiseExplainRtTest, AHigherPriorityThreadsSpansAreNamedWithAtLeastTheirTime) {
  if (const std::string why = testutil::TracefsUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const int cpu = OnlineCpus(FsRoot::Live()).back();
  NoiseRequest request;
  request.cpus = std::to_string(cpu);
  request.duration = "1500ms";
  request.policy = "fifo:50";
  request.policy_given = true;
  // Events are the gaps above 200 us: the spans (1 ms) and the host's larger stalls, not the
  // VM's ~1,200 small gaps a second, which a sanitizer build's explainer cannot keep up with
  // (ci53, ASan: the spans' windows had left the trace's 3 s retention before their turn).
  request.threshold = "200us";
  request.explain = true;
  auto planned = BuildNoisePlan(request, FsRoot::Live());
  ASSERT_TRUE(planned) << planned.error().message;
  ASSERT_TRUE(planned->explain);
  planned->plan.lock_memory = false;

  constexpr int kSpans = 8;
  constexpr int64_t kSpin = 1 * kNsPerMs;
  std::vector<testutil::Span> spans;
  std::string error;
  int taker_tid = 0;
  std::thread taker([&] {
    (void)pthread_setname_np(pthread_self(), "noise-taker");
    taker_tid = static_cast<int>(syscall(SYS_gettid));
    // The spans start 200 ms after the poller thread exists (MeasureNoise starts the trace
    // before it): a fixed delay from here was too short for a sanitizer build's start (ci53).
    if (!PollerAppears(5 * kNsPerSec)) {
      error = "no rtpulse-noise thread within 5 s";
      return;
    }
    spans = testutil::TakeTheCpu(cpu, 60, MonotonicNs() + 200 * kNsPerMs, 100 * kNsPerMs, kSpin,
                                 kSpans, &error);
  });
  const sys::SystemInfo info = sys::ProbeSystem(FsRoot::Live());
  auto run = MeasureNoise(*planned, info, "rtpulse noise --explain", "test");
  taker.join();
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_TRUE(run) << run.error().message;
  for (const std::string& w : run->warnings) {
    EXPECT_EQ(w.find("--explain: no trace"), std::string::npos) << w;
  }
  ASSERT_EQ(run->cpus.size(), 1u);
  const results::NoiseCpu& c = run->cpus[0];
  EXPECT_TRUE(run->explain);
  ASSERT_TRUE(c.causes) << "the trace ran, so the CPU has its causes";
  const results::NoiseCauses& causes = *c.causes;
  ASSERT_EQ(c.kept.size(), c.events);
  EXPECT_EQ(causes.explained + causes.not_explained, c.events);

  // Every explained event: its kinds add up to its gap; the CPU's totals are their sums.
  std::array<int64_t, results::kNoiseCauseKinds> kind_ns{};
  uint64_t explained = 0;
  int64_t explained_ns = 0;
  for (const results::NoiseEventRow& e : c.kept) {
    if (!e.kind_ns) continue;
    ++explained;
    explained_ns += e.gap_ns;
    EXPECT_EQ(std::accumulate(e.kind_ns->begin(), e.kind_ns->end(), int64_t{0}), e.gap_ns);
    for (size_t k = 0; k < kind_ns.size(); ++k) kind_ns[k] += (*e.kind_ns)[k];
  }
  EXPECT_EQ(explained, causes.explained);
  EXPECT_EQ(explained_ns, causes.explained_ns);
  EXPECT_EQ(kind_ns, causes.kind_ns);
  int64_t rows_ns = 0;
  for (const results::NoiseCauseRow& r : causes.rows) rows_ns += r.ns;
  EXPECT_EQ(rows_ns, causes.explained_ns);

  // Each span: the event that covers it was explained, its thread time holds at least the
  // span, and the taker is a row of its own with its tid and policy.
  ASSERT_EQ(spans.size(), static_cast<size_t>(kSpans));
  int64_t interrupts_ns = 0;  // In the spans' events.
  const std::string taker_row = "noise-taker " + std::to_string(taker_tid) + " rt 60";
  for (const testutil::Span& s : spans) {
    const auto covering =
        std::find_if(c.kept.begin(), c.kept.end(), [&](const results::NoiseEventRow& e) {
          return e.start_ns <= s.start_ns && e.start_ns + e.gap_ns >= s.end_ns;
        });
    ASSERT_NE(covering, c.kept.end()) << "no event covers the span at " << s.start_ns;
    ASSERT_TRUE(covering->kind_ns) << "the span's event at " << s.start_ns << " not explained";
    // The taker ran from before its first read to after its last: that time is its own
    // (thread) or an interrupt's taken in its context (irq, softirq).
    const auto& k = *covering->kind_ns;
    EXPECT_GE(k[0] + k[1] + k[2], s.end_ns - s.start_ns)
        << "irq + softirq + thread time of the span's event, at " << s.start_ns;
    interrupts_ns += k[0] + k[1];
  }
  const auto row =
      std::find_if(causes.rows.begin(), causes.rows.end(),
                   [&](const results::NoiseCauseRow& r) { return r.name == taker_row; });
  ASSERT_NE(row, causes.rows.end()) << "no row " << taker_row;
  EXPECT_EQ(row->kind, "thread");
  EXPECT_GE(row->events, static_cast<uint64_t>(kSpans));
  int64_t spun = 0;
  for (const testutil::Span& s : spans) spun += s.end_ns - s.start_ns;
  EXPECT_GE(row->ns + interrupts_ns, spun);
  const std::string summary = results::FormatNoiseSummary(*run);
  EXPECT_NE(summary.find("cpu " + std::to_string(cpu) + " causes: "), std::string::npos) << summary;
}

}  // namespace
}  // namespace rtpulse::suite
