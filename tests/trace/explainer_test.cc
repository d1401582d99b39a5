// The explainer over a scripted event source (no root, no tracefs): what it explains, what
// it only counts, the cost phase, its bounds, and that each explanation is exactly what
// Attribute() makes of the same events.
#include "trace/explainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/clock.h"
#include "support/subprocess.h"

namespace rtpulse::trace {
namespace {

using testutil::ReadFile;
using testutil::TempDir;

constexpr int kProbeTid = 500;
constexpr int kHogTid = 600;

void SetComm(Comm& comm, const char* text) {
  comm.fill('\0');
  std::strncpy(comm.data(), text, comm.size() - 1);
}

void SetName(TraceEvent& event, const char* text) {
  event.name.fill('\0');
  std::strncpy(event.name.data(), text, event.name.size() - 1);
}

TraceEvent Switch(int64_t ts, int cpu, int prev_pid, const char* prev, int prev_prio,
                  int64_t prev_state, int next_pid, const char* next, int next_prio) {
  TraceEvent event;
  event.ts_ns = ts;
  event.cpu = cpu;
  event.kind = EventKind::kSchedSwitch;
  event.pid = prev_pid;
  event.prev_pid = prev_pid;
  event.prev_prio = prev_prio;
  event.prev_state = prev_state;
  SetComm(event.prev_comm, prev);
  event.next_pid = next_pid;
  event.next_prio = next_prio;
  SetComm(event.next_comm, next);
  return event;
}

TraceEvent Simple(int64_t ts, int cpu, EventKind kind, int pid) {
  TraceEvent event;
  event.ts_ns = ts;
  event.cpu = cpu;
  event.kind = kind;
  event.pid = pid;
  return event;
}

/// One late wake-up on `cpu`: a SCHED_FIFO 90 hog runs from before the deadline, the
/// probe's hrtimer fires in hard IRQ at the deadline and wakes it, and the hog keeps the
/// CPU until expected + hog_ns, when the probe is switched in; it reads its clock 3 us later.
struct Scenario {
  SpikeInput spike;
  std::vector<TraceEvent> events;
};

Scenario HogScenario(int cpu, int64_t expected_ns, int64_t hog_ns, uint64_t seq = 42,
                     int thread = 0) {
  Scenario s;
  s.spike.cpu = cpu;
  s.spike.thread = thread;
  s.spike.seq = seq;
  s.spike.expected_ns = expected_ns;
  s.spike.actual_ns = expected_ns + hog_ns + 3'000;
  const int64_t t = expected_ns;
  auto& e = s.events;
  e.push_back(Switch(t - 400'000, cpu, kProbeTid, "probe", 9, 1, kHogTid, "hog", 9));
  TraceEvent irq = Simple(t + 1'000, cpu, EventKind::kIrqEntry, kHogTid);
  irq.number = 11;
  SetName(irq, "timer");
  e.push_back(irq);
  TraceEvent expire = Simple(t + 1'500, cpu, EventKind::kHrtimerExpireEntry, kHogTid);
  expire.address = 0xabc;
  SetName(expire, "hrtimer_wakeup");
  e.push_back(expire);
  TraceEvent waking = Simple(t + 2'000, cpu, EventKind::kSchedWaking, kHogTid);
  waking.next_pid = kProbeTid;
  waking.next_prio = 9;
  SetComm(waking.next_comm, "probe");
  waking.target_cpu = cpu;
  e.push_back(waking);
  TraceEvent wakeup = waking;
  wakeup.ts_ns = t + 2'500;
  wakeup.kind = EventKind::kSchedWakeup;
  e.push_back(wakeup);
  TraceEvent expire_exit = Simple(t + 3'000, cpu, EventKind::kHrtimerExpireExit, kHogTid);
  expire_exit.address = 0xabc;
  e.push_back(expire_exit);
  TraceEvent irq_exit = Simple(t + 3'500, cpu, EventKind::kIrqExit, kHogTid);
  irq_exit.number = 11;
  e.push_back(irq_exit);
  e.push_back(Switch(t + hog_ns, cpu, kHogTid, "hog", 9, 0, kProbeTid, "probe", 9));
  return s;
}

SampleRecord RecordOf(const SpikeInput& spike) {
  SampleRecord r{};
  r.seq = spike.seq;
  r.expected_ns = spike.expected_ns;
  r.actual_ns = spike.actual_ns;
  r.thread = static_cast<uint16_t>(spike.thread);
  r.cpu = static_cast<uint16_t>(spike.cpu);
  return r;
}

SampleRecord Sample(uint64_t seq, int64_t expected_ns, int64_t latency_ns, int cpu = 1) {
  SampleRecord r{};
  r.seq = seq;
  r.expected_ns = expected_ns;
  r.actual_ns = expected_ns + latency_ns;
  r.cpu = static_cast<uint16_t>(cpu);
  return r;
}

/// What the scripted source was asked, for the tests to look at after the explainer owns it.
struct Script {
  mutable std::mutex mutex;
  std::vector<TraceEvent> events;
  bool flush_succeeds = true;
  WindowLoss report_loss;
  int64_t window_delay_ns = 0;  // a slow analysis
  uint64_t events_lost = 0;
  std::vector<std::pair<int, int64_t>> flushes;  // (cpu, until)
  struct WindowCall {
    int64_t from_ns, to_ns;
    std::vector<int> cpus;
  };
  mutable std::vector<WindowCall> windows;
  mutable std::vector<WindowCall> renders;
  std::vector<std::pair<bool, int64_t>> recording;  // (on, fake clock at the call)
  std::function<int64_t()> clock;
};

bool ScriptCpuIn(const std::vector<int>& cpus, int cpu) {
  return cpus.empty() || std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
}

class ScriptedSource final : public EventSource {
 public:
  explicit ScriptedSource(std::shared_ptr<Script> script) : script_(std::move(script)) {}

  bool Flush(int cpu, int64_t until_ns) override {
    std::lock_guard lock(script_->mutex);
    script_->flushes.emplace_back(cpu, until_ns);
    return script_->flush_succeeds;
  }
  std::vector<TraceEvent> Window(int64_t from_ns, int64_t to_ns, const std::vector<int>& cpus,
                                 WindowLoss* loss, WindowText* text) const override {
    int64_t delay_ns = 0;
    std::vector<TraceEvent> out;
    {
      std::lock_guard lock(script_->mutex);
      script_->windows.push_back({from_ns, to_ns, cpus});
      if (text != nullptr) {
        script_->renders.push_back({text->from_ns, text->to_ns, cpus});
        text->text = RenderText(*script_, text->from_ns, text->to_ns, cpus);
      }
      for (const TraceEvent& e : script_->events) {
        if (e.ts_ns >= from_ns && e.ts_ns <= to_ns && ScriptCpuIn(cpus, e.cpu)) out.push_back(e);
      }
      if (loss != nullptr) *loss = script_->report_loss;
      delay_ns = script_->window_delay_ns;
    }
    if (delay_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(delay_ns));
    std::stable_sort(out.begin(), out.end(),
                     [](const TraceEvent& a, const TraceEvent& b) { return a.ts_ns < b.ts_ns; });
    return out;
  }
  void SetRecording(bool on) override {
    std::lock_guard lock(script_->mutex);
    script_->recording.emplace_back(on, script_->clock ? script_->clock() : 0);
  }
  SessionStats stats() const override {
    std::lock_guard lock(script_->mutex);
    SessionStats s;
    s.instance = "scripted";
    s.events_read = script_->events.size();
    s.events_lost = script_->events_lost;
    return s;
  }

  /// The test's own rendering, to compare the saved file against.
  static std::string RenderText(const Script& script, int64_t from_ns, int64_t to_ns,
                                const std::vector<int>& cpus) {
    std::string text;
    for (const TraceEvent& e : script.events) {
      if (e.ts_ns < from_ns || e.ts_ns > to_ns || !ScriptCpuIn(cpus, e.cpu)) continue;
      text += "pid-" + std::to_string(e.pid) + " [" + std::to_string(e.cpu) + "] " +
              std::to_string(e.ts_ns) + ": kind " + std::to_string(static_cast<int>(e.kind)) + "\n";
    }
    return text;
  }

 private:
  std::shared_ptr<Script> script_;
};

std::unique_ptr<Explainer> StartScripted(const ExplainPlan& plan,
                                         const std::shared_ptr<Script>& script,
                                         Explainer::SpikeCallback callback = {}) {
  return Explainer::StartWith(plan, std::make_unique<ScriptedSource>(script), std::move(callback));
}

void ExpectSameExplanation(const Explanation& got, const Explanation& want) {
  EXPECT_EQ(got.lateness_ns, want.lateness_ns);
  EXPECT_EQ(got.chain, want.chain);
  EXPECT_EQ(got.chain_thread, want.chain_thread);
  EXPECT_EQ(got.probe_tid, want.probe_tid);
  EXPECT_EQ(got.complete, want.complete);
  EXPECT_EQ(got.incomplete_reason, want.incomplete_reason);
  EXPECT_EQ(got.spike.cpu, want.spike.cpu);
  EXPECT_EQ(got.spike.seq, want.spike.seq);
  EXPECT_EQ(got.spike.thread, want.spike.thread);
  EXPECT_EQ(got.spike.expected_ns, want.spike.expected_ns);
  EXPECT_EQ(got.spike.actual_ns, want.spike.actual_ns);
  ASSERT_EQ(got.parts.size(), want.parts.size());
  for (size_t i = 0; i < got.parts.size(); ++i) {
    EXPECT_EQ(got.parts[i].kind, want.parts[i].kind) << i;
    EXPECT_EQ(got.parts[i].name, want.parts[i].name) << i;
    EXPECT_EQ(got.parts[i].ns, want.parts[i].ns) << i;
    EXPECT_EQ(got.parts[i].count, want.parts[i].count) << i;
  }
}

bool HasNote(const ExplainSummary& summary, const std::string& text) {
  return std::any_of(summary.notes.begin(), summary.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

std::string AllNotes(const ExplainSummary& summary) {
  std::string all;
  for (const std::string& n : summary.notes) all += n + "\n";
  return all;
}

/// Nearest-rank percentile of raw values, computed independently of core/histogram.
int64_t NearestRankOf(std::vector<int64_t> values, double p) {
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * n));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

constexpr int64_t kBase = 1'000'000'000'000;  // a CLOCK_MONOTONIC-like origin
constexpr int64_t kThreshold = 50'000;

TEST(ExplainerTest, SpikeIsExplainedAsAttributeDoesAndItsWindowIsSaved) {
  TempDir dir;
  auto script = std::make_shared<Script>();
  const Scenario s = HogScenario(1, kBase + 10'000'000, 80'000);
  script->events = s.events;
  // Events on another CPU of the session are in the window too (a cross-CPU chain).
  script->events.push_back(Simple(kBase + 10'020'000, 2, EventKind::kIrqEntry, 0));
  std::sort(script->events.begin(), script->events.end(),
            [](const TraceEvent& a, const TraceEvent& b) { return a.ts_ns < b.ts_ns; });
  std::atomic<int64_t> fake_now{s.spike.actual_ns + 250'000'000};

  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.window_dir = dir.File("windows/run");  // created on the first window
  plan.session.cpus = {1, 2};
  plan.now_ns = [&] { return fake_now.load(); };
  std::mutex calls_mutex;
  std::vector<std::string> called;
  auto explainer = StartScripted(plan, script, [&](const Explanation& e, const std::string& v) {
    std::lock_guard lock(calls_mutex);
    called.push_back(v);
    EXPECT_EQ(e.spike.seq, 42U);
  });
  ASSERT_TRUE(explainer->active());

  std::vector<SampleRecord> records;
  for (uint64_t i = 0; i < 40; ++i)
    records.push_back(Sample(i, kBase + static_cast<int64_t>(i) * 100'000, 5'000));
  records.push_back(RecordOf(s.spike));
  explainer->OnSamples(records.data(), records.size());
  const ExplainSummary summary = explainer->Finish();

  EXPECT_TRUE(summary.active);
  EXPECT_EQ(summary.threshold_ns, kThreshold);
  EXPECT_EQ(summary.spikes_seen, 1U);
  EXPECT_EQ(summary.spikes_explained, 1U);
  EXPECT_EQ(summary.spikes_not_explained, 0U);
  ASSERT_EQ(summary.explanations.size(), 1U);

  // The same events through Attribute directly.
  std::vector<TraceEvent> window;
  for (const TraceEvent& e : script->events) {
    if (e.ts_ns >= s.spike.expected_ns - plan.history_ns &&
        e.ts_ns <= s.spike.actual_ns + plan.margin_ns) {
      window.push_back(e);
    }
  }
  const Explanation want = Attribute(window, s.spike);
  const Explanation& got = summary.explanations[0];
  ExpectSameExplanation(got, want);
  int64_t parts_ns = 0;
  for (const Part& p : got.parts) parts_ns += p.ns;
  EXPECT_EQ(parts_ns, s.spike.actual_ns - s.spike.expected_ns);
  ASSERT_EQ(summary.verdicts.size(), 1U);
  EXPECT_EQ(summary.verdicts[0], Verdict(want));
  ASSERT_EQ(called.size(), 1U);
  EXPECT_EQ(called[0], summary.verdicts[0]);
  ASSERT_EQ(summary.explained_after_ns.size(), 1U);
  EXPECT_EQ(summary.explained_after_ns[0], 250'000'000);

  // What the source was asked: a flush of the spike's CPU past its wake-up, the window
  // from the history before the deadline to the margin after the wake-up (the first event
  // after it tells who was switched in unrecorded) on the session's CPUs, and the rendering
  // with the margin on both sides.
  {
    std::lock_guard lock(script->mutex);
    ASSERT_FALSE(script->flushes.empty());
    EXPECT_EQ(script->flushes[0].first, 1);
    EXPECT_GE(script->flushes[0].second, s.spike.actual_ns);
    ASSERT_EQ(script->windows.size(), 1U);
    EXPECT_EQ(script->windows[0].from_ns, s.spike.expected_ns - plan.history_ns);
    EXPECT_EQ(script->windows[0].to_ns, s.spike.actual_ns + plan.margin_ns);
    EXPECT_EQ(script->windows[0].cpus, (std::vector<int>{1, 2}));
    ASSERT_EQ(script->renders.size(), 1U);
    EXPECT_EQ(script->renders[0].from_ns, s.spike.expected_ns - plan.margin_ns);
    EXPECT_EQ(script->renders[0].to_ns, s.spike.actual_ns + plan.margin_ns);
    EXPECT_TRUE(script->recording.empty()) << "no cost phase: recording is never touched";
  }

  // The raw window: a header naming the spike and its verdict, then the rendered text.
  const std::string path = plan.window_dir + "/spike-00000-cpu1.txt";
  EXPECT_EQ(got.window_file, path);
  const std::string text = ReadFile(path);
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_NE(header.find("spike 00000: T:0 cpu 1 seq 42"), std::string::npos) << header;
  EXPECT_NE(header.find("expected " + std::to_string(s.spike.expected_ns) + " ns"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("actual " + std::to_string(s.spike.actual_ns) + " ns"), std::string::npos)
      << header;
  EXPECT_NE(header.find("lateness 83000 ns"), std::string::npos) << header;
  EXPECT_NE(header.find(": " + Verdict(want)), std::string::npos) << header;
  const std::string rendered = ScriptedSource::RenderText(
      *script, s.spike.expected_ns - plan.margin_ns, s.spike.actual_ns + plan.margin_ns, {1, 2});
  ASSERT_FALSE(rendered.empty());
  EXPECT_TRUE(text.size() >= rendered.size() &&
              text.compare(text.size() - rendered.size(), rendered.size(), rendered) == 0)
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '#'), 2) << "header and window lines only";
  EXPECT_EQ(dir.List(), std::vector<std::string>{"windows"});
  // Summarise() over the explanations is the cause table.
  const CauseTable table = Summarise(summary.explanations);
  ASSERT_EQ(summary.causes.by_time.size(), table.by_time.size());
  for (size_t i = 0; i < table.by_time.size(); ++i) {
    EXPECT_EQ(summary.causes.by_time[i].name, table.by_time[i].name);
    EXPECT_EQ(summary.causes.by_time[i].total_ns, table.by_time[i].total_ns);
  }
  EXPECT_EQ(summary.trace.instance, "scripted");
}

TEST(ExplainerTest, SamplesAtOrBelowTheThresholdAreNotExplainedAndMissedOnesAre) {
  auto script = std::make_shared<Script>();
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  auto explainer = StartScripted(plan, script);
  std::vector<SampleRecord> records;
  for (uint64_t i = 0; i < 1000; ++i) {
    records.push_back(
        Sample(i, kBase + static_cast<int64_t>(i) * 100'000, i % 2 == 0 ? kThreshold : 1'000));
  }
  explainer->OnSamples(records.data(), records.size());
  {
    std::lock_guard lock(script->mutex);
    EXPECT_TRUE(script->flushes.empty());
    EXPECT_TRUE(script->windows.empty());
  }
  // A missed period is a sample too: late by actual - expected, so explained.
  SampleRecord missed = Sample(2000, kBase + 300'000'000, 250'000, 3);
  missed.flags = SampleRecord::kMissed;
  explainer->OnSamples(&missed, 1);
  const ExplainSummary summary = explainer->Finish();
  EXPECT_EQ(summary.spikes_seen, 1U);
  EXPECT_EQ(summary.spikes_explained, 1U);
  ASSERT_EQ(summary.explanations.size(), 1U);
  EXPECT_EQ(summary.explanations[0].spike.seq, 2000U);
  EXPECT_EQ(summary.explanations[0].spike.cpu, 3);
  EXPECT_EQ(summary.explanations[0].lateness_ns, 250'000);
  EXPECT_EQ(summary.explanations[0].window_file, "");
  // The source had no events at all: the explanation says so, and so do the notes.
  EXPECT_FALSE(summary.explanations[0].complete);
  EXPECT_EQ(summary.notes,
            std::vector<std::string>{"1 explanation is incomplete (the trace does not cover the "
                                     "whole window): the gap is reported as unaccounted"});
}

TEST(ExplainerTest, MaxExplainedBoundsTheExplanationsAndCountsTheRest) {
  TempDir dir;
  auto script = std::make_shared<Script>();
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.max_explained = 3;
  plan.window_dir = dir.path();
  plan.probe_tids = {kProbeTid, kProbeTid + 1};
  auto explainer = StartScripted(plan, script);
  std::vector<SampleRecord> records;
  for (uint64_t i = 0; i < 10; ++i) {
    SampleRecord r =
        Sample(i, kBase + static_cast<int64_t>(i) * 1'000'000, 60'000 + static_cast<int64_t>(i), 0);
    r.thread = static_cast<uint16_t>(i % 3);  // thread 2 has no known tid
    records.push_back(r);
    records.push_back(Sample(i, kBase + static_cast<int64_t>(i) * 1'000'000 + 500'000, 2'000));
  }
  explainer->OnSamples(records.data(), records.size());
  const ExplainSummary summary = explainer->Finish();
  EXPECT_EQ(summary.spikes_seen, 10U);
  EXPECT_EQ(summary.spikes_explained, 3U);
  EXPECT_EQ(summary.spikes_not_explained, 7U);
  EXPECT_EQ(summary.spikes_seen, summary.spikes_explained + summary.spikes_not_explained);
  ASSERT_EQ(summary.explanations.size(), 3U);
  EXPECT_EQ(summary.verdicts.size(), 3U);
  EXPECT_EQ(summary.explained_after_ns.size(), 3U);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(summary.explanations[i].spike.seq, i) << "in arrival order";
    EXPECT_EQ(summary.explanations[i].lateness_ns, 60'000 + static_cast<int64_t>(i));
  }
  EXPECT_EQ(summary.explanations[0].spike.probe_tid, kProbeTid);
  EXPECT_EQ(summary.explanations[1].spike.probe_tid, kProbeTid + 1);
  EXPECT_EQ(summary.explanations[2].spike.probe_tid, 0);
  EXPECT_EQ(dir.List().size(), 3U);
  for (const char* name :
       {"spike-00000-cpu0.txt", "spike-00001-cpu0.txt", "spike-00002-cpu0.txt"}) {
    EXPECT_FALSE(ReadFile(dir.File(name)).empty()) << name;
  }
  EXPECT_TRUE(HasNote(summary, "7 spikes above 50 us beyond the first 3 explained"))
      << AllNotes(summary);
}

TEST(ExplainerTest, SpikeDueBeforeItsProbeWokeForThePreviousPeriodIsMarkedCarried) {
  TempDir dir;
  auto script = std::make_shared<Script>();
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.window_dir = dir.path();
  auto explainer = StartScripted(plan, script);
  const int64_t e = kBase + 1'000'000;
  std::vector<SampleRecord> batch;
  batch.push_back(Sample(0, e, 1'200'000));                // woke after the next deadline
  SampleRecord other = Sample(0, e + 1'100'000, 100'000);  // another thread: its own first
  other.thread = 1;
  batch.push_back(other);
  batch.push_back(Sample(1, e + 1'000'000, 250'000));  // due at e + 1 ms, before the wake-up
  batch.push_back(Sample(2, e + 2'000'000, 60'000));   // the probe had woken by then
  explainer->OnSamples(batch.data(), batch.size());
  const ExplainSummary summary = explainer->Finish();
  ASSERT_EQ(summary.spikes_explained, 4U);
  const std::string carried = ", due while the previous period was still late: ";
  const std::vector<std::string> files = {"spike-00000-cpu1.txt", "spike-00001-cpu1.txt",
                                          "spike-00002-cpu1.txt", "spike-00003-cpu1.txt"};
  EXPECT_EQ(dir.List().size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string text = ReadFile(dir.File(files[i]));
    EXPECT_EQ(text.find(carried) != std::string::npos, i == 2) << files[i] << "\n" << text;
  }
  EXPECT_TRUE(
      HasNote(summary, "1 spike was due before the probe had woken for the previous period"))
      << AllNotes(summary);
}

TEST(ExplainerTest, CostPhaseRecordsWithoutTheTraceThenWithItAndComparesTheirPercentiles) {
  auto script = std::make_shared<Script>();
  std::atomic<int64_t> fake_now{kBase};
  script->clock = [&] { return fake_now.load(); };
  const Scenario late = HogScenario(1, kBase + 1'500'000'000, 70'000, 7);
  script->events = late.events;

  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.cost_phase_ns = 1'000'000'000;
  plan.now_ns = [&] { return fake_now.load(); };
  auto explainer = StartScripted(plan, script);
  {
    std::lock_guard lock(script->mutex);
    ASSERT_EQ(script->recording.size(), 1U);
    EXPECT_FALSE(script->recording[0].first) << "the cost phase starts with recording off";
  }
  // Latencies below 512 ns, where the histogram is exact, so its percentiles can be
  // compared for equality with a recomputation from the raw values.
  std::vector<int64_t> without, with;
  uint64_t seq = 0;
  auto latency_of = [](uint64_t i) { return static_cast<int64_t>(100 + (i * 37) % 400); };
  std::vector<SampleRecord> batch;
  const int64_t first = kBase + 1'000;
  for (int64_t t = first; t < first + plan.cost_phase_ns; t += 1'000'000) {  // 1000 samples
    batch.push_back(Sample(seq, t, latency_of(seq)));
    without.push_back(latency_of(seq++));
  }
  // A spike in the cost phase: counted, not explained (the trace was off).
  batch.push_back(Sample(seq++, first + 500'000'000, 90'000));
  without.push_back(90'000);
  explainer->OnSamples(batch.data(), batch.size());
  {
    std::lock_guard lock(script->mutex);
    EXPECT_EQ(script->recording.size(), 1U) << "still in the phase";
  }
  // The first sample past the phase arrives when the clock says 5 ms later (the writer's
  // drain delay): recording goes on then, and the samples of that batch that woke before it
  // were still taken without the trace; so was a spike due before it.
  const int64_t on_at = first + plan.cost_phase_ns + 5'000'000;
  fake_now = on_at;
  batch.clear();
  for (int64_t t = first + plan.cost_phase_ns; t < on_at + 200'000'000; t += 1'000'000) {
    batch.push_back(Sample(seq, t, latency_of(seq)));
    (t + latency_of(seq) < on_at ? without : with).push_back(latency_of(seq));
    ++seq;
  }
  batch.push_back(Sample(seq++, on_at - 2'000'000, 95'000));  // due before recording: not
  without.push_back(95'000);
  batch.push_back(RecordOf(late.spike));  // after: explained
  with.push_back(late.spike.actual_ns - late.spike.expected_ns);
  explainer->OnSamples(batch.data(), batch.size());
  {
    std::lock_guard lock(script->mutex);
    ASSERT_EQ(script->recording.size(), 2U);
    EXPECT_TRUE(script->recording[1].first);
    EXPECT_EQ(script->recording[1].second, on_at);
  }
  const ExplainSummary summary = explainer->Finish();
  EXPECT_EQ(summary.spikes_seen, 3U);
  EXPECT_EQ(summary.spikes_explained, 1U);
  EXPECT_EQ(summary.spikes_not_explained, 2U);
  ASSERT_EQ(summary.explanations.size(), 1U);
  EXPECT_EQ(summary.explanations[0].spike.seq, 7U);
  ASSERT_TRUE(summary.cost.has_value());
  const ExplainCost& cost = *summary.cost;
  EXPECT_EQ(cost.samples_without, without.size());
  EXPECT_EQ(cost.samples_with, with.size());
  EXPECT_GT(with.size(), 100U);
  EXPECT_EQ(cost.p50_without_ns, NearestRankOf(without, 50));
  EXPECT_EQ(cost.p99_without_ns, NearestRankOf(without, 99));
  EXPECT_EQ(cost.p50_with_ns, NearestRankOf(with, 50));
  EXPECT_EQ(cost.p99_with_ns, NearestRankOf(with, 99));
  EXPECT_TRUE(HasNote(summary, "2 spikes above 50 us in the cost phase (the first 1 s"))
      << AllNotes(summary);
  EXPECT_TRUE(HasNote(summary, "trace cost: without the trace p50 ")) << AllNotes(summary);
  EXPECT_TRUE(HasNote(summary, "(" + std::to_string(with.size()) + " samples)"))
      << AllNotes(summary);
}

TEST(ExplainerTest, CostNotMeasuredWhenTheRunEndsInsideThePhase) {
  auto script = std::make_shared<Script>();
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.cost_phase_ns = 2'000'000'000;
  auto explainer = StartScripted(plan, script);
  std::vector<SampleRecord> batch;
  for (uint64_t i = 0; i < 100; ++i) {
    batch.push_back(Sample(i, kBase + static_cast<int64_t>(i) * 1'000'000, 300));
  }
  explainer->OnSamples(batch.data(), batch.size());
  const ExplainSummary summary = explainer->Finish();
  EXPECT_FALSE(summary.cost.has_value());
  EXPECT_TRUE(HasNote(summary, "trace cost not measured: 100 samples without the trace, 0 with"))
      << AllNotes(summary);
  std::lock_guard lock(script->mutex);
  ASSERT_EQ(script->recording.size(), 1U);
  EXPECT_FALSE(script->recording[0].first);
}

TEST(ExplainerTest, SamplesAndSpikesAfterFinishAreIgnored) {
  auto script = std::make_shared<Script>();
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.cost_phase_ns = 1'000'000;
  auto explainer = StartScripted(plan, script);
  const ExplainSummary summary = explainer->Finish();
  EXPECT_EQ(summary.spikes_seen, 0U);
  // Past the cost phase and late: would turn the recording on and queue a spike.
  std::vector<SampleRecord> batch = {Sample(0, kBase, 100), Sample(1, kBase + 5'000'000, 90'000)};
  explainer->OnSamples(batch.data(), batch.size());
  SpikeInput job;
  job.expected_ns = kBase + 6'000'000;
  job.actual_ns = job.expected_ns + 90'000;
  explainer->OnSpike(job);
  std::lock_guard lock(script->mutex);
  EXPECT_EQ(script->recording.size(), 1U) << "only the cost phase's recording off at start";
  EXPECT_TRUE(script->windows.empty());
}

TEST(ExplainerTest, InactiveExplainerCountsSpikesExplainsNoneAndSaysWhy) {
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.cost_phase_ns = 1'000'000'000;
  const std::string reason = "no tracefs at /nowhere: mount -t tracefs nodev /sys/kernel/tracing";
  auto explainer = Explainer::StartUnavailable(plan, reason);
  EXPECT_FALSE(explainer->active());
  std::vector<SampleRecord> batch;
  for (uint64_t i = 0; i < 50; ++i) {
    batch.push_back(
        Sample(i, kBase + static_cast<int64_t>(i) * 1'000'000, i % 10 == 0 ? 80'000 : 2'000));
  }
  explainer->OnSamples(batch.data(), batch.size());
  SpikeInput job;
  job.expected_ns = kBase;
  job.actual_ns = kBase + 70'000;
  explainer->OnSpike(job);
  const ExplainSummary summary = explainer->Finish();
  EXPECT_FALSE(summary.active);
  EXPECT_EQ(summary.unavailable_reason, reason);
  EXPECT_EQ(summary.spikes_seen, 6U);
  EXPECT_EQ(summary.spikes_explained, 0U);
  EXPECT_EQ(summary.spikes_not_explained, 6U);
  EXPECT_TRUE(summary.explanations.empty());
  EXPECT_FALSE(summary.cost.has_value()) << "no trace, no cost to measure";
  EXPECT_TRUE(HasNote(summary, "--explain was inactive: " + reason + "; 6 spikes above 50 us"))
      << AllNotes(summary);
}

TEST(ExplainerTest, StartWithoutATracefsIsInactiveWithTheSessionsReason) {
  TempDir dir;  // an empty folder: no tracefs here
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.session.tracefs_dir = dir.path();
  auto explainer = Explainer::Start(plan, {});
  EXPECT_FALSE(explainer->active());
  SampleRecord spike = Sample(1, kBase, 90'000);
  explainer->OnSamples(&spike, 1);
  const ExplainSummary summary = explainer->Finish();
  EXPECT_FALSE(summary.active);
  EXPECT_EQ(summary.spikes_seen, 1U);
  EXPECT_EQ(summary.spikes_not_explained, 1U);
  const std::string built_without = "rtpulse was built without libtracefs (RTPULSE_TRACE=OFF)";
  if (summary.unavailable_reason.rfind(built_without, 0) == 0) return;
  Expected<std::unique_ptr<TraceSession>> opened = TraceSession::Open(plan.session);
  ASSERT_FALSE(opened.has_value());
  EXPECT_EQ(summary.unavailable_reason, opened.error().message);
  EXPECT_FALSE(summary.unavailable_reason.empty());
}

TEST(ExplainerTest, FlushThatNeverSucceedsStillFinishesWithinItsBoundAndSaysSo) {
  auto script = std::make_shared<Script>();
  script->flush_succeeds = false;  // an idle CPU: nothing newer ever arrives
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.flush_wait_ns = 100'000'000;
  plan.finish_budget_ns = 500'000'000;
  auto explainer = StartScripted(plan, script);
  std::vector<SampleRecord> batch;
  for (uint64_t i = 0; i < 20; ++i) {
    batch.push_back(
        Sample(i, kBase + static_cast<int64_t>(i) * 1'000'000, 75'000, static_cast<int>(i % 2)));
  }
  explainer->OnSamples(batch.data(), batch.size());
  const auto started = std::chrono::steady_clock::now();
  const ExplainSummary summary = explainer->Finish();
  const auto took = std::chrono::steady_clock::now() - started;
  // The budget plus one spike's wait, with room for a VM's stolen time.
  EXPECT_LT(took, std::chrono::milliseconds(500 + 100 + 1500));
  EXPECT_EQ(summary.spikes_seen, 20U);
  EXPECT_EQ(summary.spikes_seen, summary.spikes_explained + summary.spikes_not_explained);
  EXPECT_GT(summary.spikes_explained, 0U);
  EXPECT_TRUE(HasNote(summary, " explained before the trace showed an event past the wake-up"))
      << AllNotes(summary);
  if (summary.spikes_not_explained > 0) {
    EXPECT_TRUE(HasNote(summary, "still queued when the run's end allowed no more time"))
        << AllNotes(summary);
  }
  std::lock_guard lock(script->mutex);
  EXPECT_EQ(script->windows.size(), summary.spikes_explained) << "explained with what it had";
}

TEST(ExplainerTest, SlowAnalysisAtFinishDropsWhatTheBudgetCannotCoverAndCountsIt) {
  auto script = std::make_shared<Script>();
  script->window_delay_ns = 100'000'000;
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.finish_budget_ns = 300'000'000;
  auto explainer = StartScripted(plan, script);
  std::vector<SampleRecord> batch;
  for (uint64_t i = 0; i < 30; ++i) {
    batch.push_back(Sample(i, kBase + static_cast<int64_t>(i) * 1'000'000, 75'000));
  }
  explainer->OnSamples(batch.data(), batch.size());
  const auto started = std::chrono::steady_clock::now();
  const ExplainSummary summary = explainer->Finish();
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_LT(took, std::chrono::milliseconds(300 + 100 + 1500));
  EXPECT_EQ(summary.spikes_seen, 30U);
  EXPECT_LT(summary.spikes_explained, 30U);
  EXPECT_EQ(summary.spikes_seen, summary.spikes_explained + summary.spikes_not_explained);
  EXPECT_TRUE(HasNote(summary, std::to_string(summary.spikes_not_explained) +
                                   " spikes still queued when the run's end allowed no more "
                                   "time (0.3 s)"))
      << AllNotes(summary);
}

TEST(ExplainerTest, OnSpikeFromSeveralThreadsExplainsTheLateJobs) {
  auto script = std::make_shared<Script>();
  const Scenario s = HogScenario(2, kBase + 50'000'000, 120'000, 9, 1);
  script->events = s.events;
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  std::atomic<int> callbacks{0};
  auto explainer =
      StartScripted(plan, script, [&](const Explanation&, const std::string&) { ++callbacks; });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        SpikeInput job;
        job.cpu = 3;
        job.thread = t;
        job.seq = static_cast<uint64_t>(i);
        job.expected_ns = kBase + 100'000'000 + i * 1'000'000;
        job.actual_ns = job.expected_ns + (i % 5 == 0 ? 60'000 : kThreshold);  // 5 late each
        explainer->OnSpike(job);
      }
    });
  }
  for (auto& th : threads) th.join();
  SpikeInput with_tid = s.spike;
  with_tid.probe_tid = kProbeTid;
  explainer->OnSpike(with_tid);
  const ExplainSummary summary = explainer->Finish();
  EXPECT_EQ(summary.spikes_seen, 21U);
  EXPECT_EQ(summary.spikes_explained, 21U);
  EXPECT_EQ(callbacks.load(), 21);
  const auto it = std::find_if(summary.explanations.begin(), summary.explanations.end(),
                               [](const Explanation& e) { return e.spike.seq == 9; });
  ASSERT_NE(it, summary.explanations.end());
  EXPECT_EQ(it->spike.probe_tid, kProbeTid);
  std::vector<TraceEvent> window;
  for (const TraceEvent& e : s.events) {
    if (e.ts_ns >= s.spike.expected_ns - plan.history_ns &&
        e.ts_ns <= s.spike.actual_ns + plan.margin_ns) {
      window.push_back(e);
    }
  }
  ExpectSameExplanation(*it, Attribute(window, with_tid));
}

TEST(ExplainerTest, ExplainedAfterIsMeasuredOnTheRealClock) {
  auto script = std::make_shared<Script>();
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  auto explainer = StartScripted(plan, script);
  const int64_t actual_ns = MonotonicNs();
  SampleRecord r = Sample(1, actual_ns - 90'000, 90'000);
  explainer->OnSamples(&r, 1);
  const ExplainSummary summary = explainer->Finish();
  const int64_t finished_ns = MonotonicNs();
  ASSERT_EQ(summary.explained_after_ns.size(), 1U);
  EXPECT_GE(summary.explained_after_ns[0], 0);
  EXPECT_LE(summary.explained_after_ns[0], finished_ns - actual_ns);
}

TEST(ExplainerTest, LostEventsAndAnUnwritableWindowFolderAreNoted) {
  TempDir dir;
  {
    std::ofstream file(dir.File("a-file"));
    file << "in the way\n";
  }
  auto script = std::make_shared<Script>();
  const Scenario s = HogScenario(1, kBase + 10'000'000, 80'000);
  script->events = s.events;
  script->report_loss.kernel = true;
  script->events_lost = 12;
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  plan.window_dir = dir.File("a-file/windows");
  auto explainer = StartScripted(plan, script);
  const SampleRecord r = RecordOf(s.spike);
  explainer->OnSamples(&r, 1);
  const ExplainSummary summary = explainer->Finish();
  ASSERT_EQ(summary.explanations.size(), 1U);
  std::vector<TraceEvent> window;
  for (const TraceEvent& e : s.events) {
    if (e.ts_ns >= s.spike.expected_ns - plan.history_ns &&
        e.ts_ns <= s.spike.actual_ns + plan.margin_ns) {
      window.push_back(e);
    }
  }
  ExpectSameExplanation(summary.explanations[0], Attribute(window, s.spike, {true, false}));
  EXPECT_EQ(summary.explanations[0].window_file, "");
  EXPECT_EQ(summary.trace.events_lost, 12U);
  EXPECT_TRUE(HasNote(summary, "the kernel dropped 12 trace events")) << AllNotes(summary);
  EXPECT_TRUE(HasNote(summary, "1 raw window was not saved: ")) << AllNotes(summary);
  EXPECT_TRUE(HasNote(summary, "a-file")) << AllNotes(summary);
}

TEST(ExplainerTest, AWindowTheStoreHadTrimmedIsNotBlamedOnTheKernel) {
  auto script = std::make_shared<Script>();
  const Scenario s = HogScenario(1, kBase + 10'000'000, 80'000);
  script->events = s.events;
  script->report_loss.trimmed = true;
  ExplainPlan plan;
  plan.threshold_ns = kThreshold;
  auto explainer = StartScripted(plan, script);
  const SampleRecord r = RecordOf(s.spike);
  explainer->OnSamples(&r, 1);
  const ExplainSummary summary = explainer->Finish();
  ASSERT_EQ(summary.explanations.size(), 1U);
  const Explanation& e = summary.explanations[0];
  EXPECT_FALSE(e.complete);
  EXPECT_NE(e.incomplete_reason.find("explained too late"), std::string::npos)
      << e.incomplete_reason;
  EXPECT_EQ(e.incomplete_reason.find("kernel"), std::string::npos) << e.incomplete_reason;
  EXPECT_TRUE(HasNote(summary,
                      "1 spike was explained after rtpulse's trace store had dropped the start "
                      "of its window (it keeps 3 s and 500000 events per CPU)"))
      << AllNotes(summary);
  EXPECT_FALSE(HasNote(summary, "the kernel dropped")) << AllNotes(summary);
}

}  // namespace
}  // namespace rtpulse::trace
