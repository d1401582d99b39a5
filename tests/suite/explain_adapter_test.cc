// The suite's --explain adapter: ExplainSink hands every batch to a real Explainer (over a
// scripted event source: no root, no tracefs) and then to the inner sink unchanged, and
// ToExplainResult carries every field of the summary into the result types, window files
// relative to the result folder.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "suite/explain_record.h"
#include "suite/explain_sink.h"

namespace rtpulse::suite {
namespace {

/// What the inner sink received.
struct SinkLog {
  std::vector<SampleRecord> records;
  size_t ticks = 0;
  bool finished = false;
  uint64_t dropped = 0;
  bool interrupted = false;
};

class RecordingSink final : public measure::SampleSink {
 public:
  explicit RecordingSink(SinkLog* log) : log_(log) {}
  Status Write(const SampleRecord* records, size_t count) override {
    if (count == 0) ++log_->ticks;
    log_->records.insert(log_->records.end(), records, records + count);
    return Status::Ok();
  }
  Status Finish(uint64_t dropped, bool interrupted) override {
    log_->finished = true;
    log_->dropped = dropped;
    log_->interrupted = interrupted;
    return Status::Ok();
  }

 private:
  SinkLog* log_;
};

constexpr int kAdapterProbeTid = 700;
constexpr int kAdapterHogTid = 701;

void AdapterComm(trace::Comm& comm, const char* text) {
  comm.fill('\0');
  std::strncpy(comm.data(), text, comm.size() - 1);
}

/// A hog switched in before every deadline and out to the probe at the wake-up: the window
/// has a task the whole time, so every ns is attributed.
class HogSource final : public trace::EventSource {
 public:
  explicit HogSource(std::vector<SampleRecord> spikes) : spikes_(std::move(spikes)) {}
  bool Flush(int, int64_t) override { return true; }
  std::vector<trace::TraceEvent> Window(int64_t from_ns, int64_t to_ns, const std::vector<int>&,
                                        trace::WindowLoss* loss,
                                        trace::WindowText* text) const override {
    if (loss != nullptr) *loss = {};
    if (text != nullptr) text->text = "# scripted\n";
    std::vector<trace::TraceEvent> out;
    for (const auto& s : spikes_) {
      for (const auto& e :
           {Switch(s.expected_ns - 50'000, s.cpu, kAdapterProbeTid, "probe", kAdapterHogTid, "hog"),
            Switch(s.actual_ns, s.cpu, kAdapterHogTid, "hog", kAdapterProbeTid, "probe")}) {
        if (e.ts_ns >= from_ns && e.ts_ns <= to_ns) out.push_back(e);
      }
    }
    return out;
  }
  void SetRecording(bool) override {}
  trace::SessionStats stats() const override {
    trace::SessionStats s;
    s.instance = "scripted";
    return s;
  }

 private:
  static trace::TraceEvent Switch(int64_t ts, int cpu, int prev, const char* prev_comm, int next,
                                  const char* next_comm) {
    trace::TraceEvent e;
    e.ts_ns = ts;
    e.cpu = cpu;
    e.kind = trace::EventKind::kSchedSwitch;
    e.pid = prev;
    e.prev_pid = prev;
    e.prev_prio = 19;
    e.prev_state = prev == kAdapterProbeTid ? 1 : 0;
    AdapterComm(e.prev_comm, prev_comm);
    e.next_pid = next;
    e.next_prio = 19;
    AdapterComm(e.next_comm, next_comm);
    return e;
  }
  std::vector<SampleRecord> spikes_;
};

SampleRecord AdapterSample(uint64_t seq, int64_t expected_ns, int64_t latency_ns) {
  SampleRecord r{};
  r.seq = seq;
  r.expected_ns = expected_ns;
  r.actual_ns = expected_ns + latency_ns;
  r.cpu = 1;
  return r;
}

TEST(ExplainSinkTest, TheExplainerSeesEveryBatchAndTheInnerSinkGetsItUnchanged) {
  const int64_t t0 = 1'000'000'000'000;
  std::vector<SampleRecord> batch1 = {AdapterSample(0, t0, 10'000),
                                      AdapterSample(1, t0 + 1'000'000, 300'000),
                                      AdapterSample(2, t0 + 2'000'000, 12'000)};
  std::vector<SampleRecord> batch2 = {AdapterSample(3, t0 + 3'000'000, 250'001),
                                      AdapterSample(4, t0 + 4'000'000, 250'000)};
  trace::ExplainPlan plan;
  plan.threshold_ns = 250'000;
  plan.flush_wait_ns = 10'000'000;
  std::vector<SampleRecord> spikes = {batch1[1], batch2[0]};
  auto explainer = trace::Explainer::StartWith(plan, std::make_unique<HogSource>(spikes), nullptr);
  ASSERT_TRUE(explainer->active());
  SinkLog log;
  {
    ExplainSink sink(explainer.get(), std::make_unique<RecordingSink>(&log));
    ASSERT_TRUE(sink.has_inner());
    ASSERT_TRUE(sink.Write(batch1.data(), batch1.size()).ok());
    ASSERT_TRUE(sink.Write(nullptr, 0).ok());  // the writer's idle tick
    ASSERT_TRUE(sink.Write(batch2.data(), batch2.size()).ok());
    ASSERT_TRUE(sink.Finish(7, true).ok());
    EXPECT_EQ(sink.seen(), 5u);
    EXPECT_EQ(sink.dropped(), 7u);
  }
  ASSERT_EQ(log.records.size(), 5u);
  for (size_t i = 0; i < log.records.size(); ++i) EXPECT_EQ(log.records[i].seq, i);
  EXPECT_EQ(log.ticks, 1u);
  EXPECT_TRUE(log.finished);
  EXPECT_EQ(log.dropped, 7u);
  EXPECT_TRUE(log.interrupted);
  const trace::ExplainSummary summary = explainer->Finish();
  // Above the threshold, strictly: 300 us and 250.001 us, not 250 us itself.
  EXPECT_EQ(summary.spikes_seen, 2u);
  ASSERT_EQ(summary.explanations.size(), 2u);
  EXPECT_EQ(summary.explanations[0].spike.seq, 1u);
  EXPECT_EQ(summary.explanations[1].spike.seq, 3u);
  EXPECT_EQ(summary.explanations[0].lateness_ns, 300'000);
  EXPECT_EQ(summary.explanations[1].lateness_ns, 250'001);
}

TEST(ExplainSinkTest, WithoutAnInnerSinkNothingIsWrittenAndTheExplainerStillCounts) {
  trace::ExplainPlan plan;
  plan.threshold_ns = 100'000;
  auto explainer = trace::Explainer::StartUnavailable(plan, "no tracefs here");
  ExplainSink sink(explainer.get(), nullptr);
  EXPECT_FALSE(sink.has_inner());
  std::vector<SampleRecord> batch = {AdapterSample(0, 5'000'000, 200'000),
                                     AdapterSample(1, 6'000'000, 50'000)};
  EXPECT_TRUE(sink.Write(batch.data(), batch.size()).ok());
  EXPECT_TRUE(sink.Finish(0, false).ok());
  const trace::ExplainSummary summary = explainer->Finish();
  EXPECT_FALSE(summary.active);
  EXPECT_EQ(summary.unavailable_reason, "no tracefs here");
  EXPECT_EQ(summary.spikes_seen, 1u);
  EXPECT_EQ(summary.spikes_explained, 0u);
  EXPECT_EQ(summary.spikes_not_explained, 1u);
}

trace::ExplainSummary FilledSummary() {
  trace::ExplainSummary s;
  s.threshold_ns = 150'000;
  s.active = true;
  s.unavailable_reason = "none";
  s.spikes_seen = 9;
  s.spikes_explained = 2;
  s.spikes_not_explained = 7;
  trace::Explanation a;
  a.spike = {1, 2, 33, 1'000'000, 1'300'000, 44};
  a.lateness_ns = 300'000;
  a.parts = {{trace::CauseKind::kThread, "hog 701 rt 90", 250'000, 1},
             {trace::CauseKind::kIrq, "irq 45 eth0", 40'000, 2},
             {trace::CauseKind::kUnaccounted, "unaccounted", 10'000, 1}};
  a.chain = trace::ChainKind::kDeferred;
  a.chain_thread = "ktimers/2";
  a.probe_tid = 44;
  a.complete = false;
  a.incomplete_reason = "lost events";
  a.window_file = "/tmp/rtpulse-run/s1/explain/spike-00001-cpu2.txt";
  trace::Explanation b = a;
  b.spike.seq = 34;
  b.chain = trace::ChainKind::kDirect;
  b.window_file = "/elsewhere/spike-00002-cpu2.txt";
  s.explanations = {a, b};
  s.verdicts = {"verdict a", "verdict b"};
  s.explained_after_ns = {5'000'000, 6'000'000};
  s.causes.by_time = {{trace::CauseKind::kThread, "hog 701 rt 90", 500'000, 2, 250'000}};
  s.causes.by_count = {{trace::CauseKind::kIrq, "irq 45 eth0", 80'000, 2, 40'000}};
  s.trace.instance = "rtpulse-99";
  s.trace.events_enabled = {"sched:sched_switch"};
  s.trace.events_missing = {"ipi:ipi_raise"};
  s.trace.events_read = 1234;
  s.trace.events_lost = 5;
  s.trace.reader_cpu_ns = 6789;
  s.cost = trace::ExplainCost{100, 200, 11, 12, 13, 14};
  s.notes = {"a note"};
  return s;
}

TEST(ExplainRecordTest, EveryFieldArrivesAndWindowFilesAreRelativeToTheResultFolder) {
  const results::ExplainResult r = ToExplainResult(FilledSummary(), "/tmp/rtpulse-run");
  EXPECT_EQ(r.threshold_ns, 150'000);
  EXPECT_TRUE(r.active);
  EXPECT_EQ(r.unavailable_reason, "none");
  EXPECT_EQ(r.spikes_seen, 9u);
  EXPECT_EQ(r.spikes_explained, 2u);
  EXPECT_EQ(r.spikes_not_explained, 7u);
  ASSERT_EQ(r.spikes.size(), 2u);
  const auto& a = r.spikes[0];
  EXPECT_EQ(a.thread, 2);
  EXPECT_EQ(a.cpu, 1);
  EXPECT_EQ(a.seq, 33u);
  EXPECT_EQ(a.expected_ns, 1'000'000);
  EXPECT_EQ(a.latency_ns, 300'000);
  EXPECT_EQ(a.chain, "deferred");
  EXPECT_EQ(a.chain_thread, "ktimers/2");
  EXPECT_EQ(a.probe_tid, 44);
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.incomplete_reason, "lost events");
  EXPECT_EQ(a.verdict, "verdict a");
  EXPECT_EQ(a.window_file, "s1/explain/spike-00001-cpu2.txt");
  EXPECT_EQ(a.explained_after_ns, 5'000'000);
  ASSERT_EQ(a.parts.size(), 3u);
  EXPECT_EQ(a.parts[0].kind, "thread");
  EXPECT_EQ(a.parts[0].name, "hog 701 rt 90");
  EXPECT_EQ(a.parts[0].ns, 250'000);
  EXPECT_EQ(a.parts[1].kind, "irq");
  EXPECT_EQ(a.parts[1].count, 2u);
  EXPECT_EQ(a.parts[2].kind, "unaccounted");
  EXPECT_EQ(r.spikes[1].chain, "direct");
  EXPECT_EQ(r.spikes[1].verdict, "verdict b");
  EXPECT_EQ(r.spikes[1].explained_after_ns, 6'000'000);
  EXPECT_EQ(r.spikes[1].window_file, "/elsewhere/spike-00002-cpu2.txt");  // outside: as written
  ASSERT_EQ(r.causes_by_time.size(), 1u);
  EXPECT_EQ(r.causes_by_time[0].kind, "thread");
  EXPECT_EQ(r.causes_by_time[0].total_ns, 500'000);
  EXPECT_EQ(r.causes_by_time[0].spikes, 2u);
  EXPECT_EQ(r.causes_by_time[0].max_ns, 250'000);
  ASSERT_EQ(r.causes_by_count.size(), 1u);
  EXPECT_EQ(r.causes_by_count[0].name, "irq 45 eth0");
  EXPECT_EQ(r.instance, "rtpulse-99");
  EXPECT_EQ(r.events_enabled, std::vector<std::string>{"sched:sched_switch"});
  EXPECT_EQ(r.events_missing, std::vector<std::string>{"ipi:ipi_raise"});
  EXPECT_EQ(r.events_read, 1234u);
  EXPECT_EQ(r.events_lost, 5u);
  EXPECT_EQ(r.reader_cpu_ns, 6789);
  ASSERT_TRUE(r.cost.has_value());
  EXPECT_EQ(r.cost->samples_without, 100u);
  EXPECT_EQ(r.cost->samples_with, 200u);
  EXPECT_EQ(r.cost->p50_without_ns, 11);
  EXPECT_EQ(r.cost->p99_without_ns, 12);
  EXPECT_EQ(r.cost->p50_with_ns, 13);
  EXPECT_EQ(r.cost->p99_with_ns, 14);
  EXPECT_EQ(r.notes, std::vector<std::string>{"a note"});
}

TEST(ExplainRecordTest, RelativeOnlyInsideTheBase) {
  EXPECT_EQ(RelativeToBase("/a/b/c.txt", "/a"), "b/c.txt");
  EXPECT_EQ(RelativeToBase("/a/b/c.txt", "/a/"), "b/c.txt");
  EXPECT_EQ(RelativeToBase("/a/b/../c.txt", "/a"), "c.txt");
  EXPECT_EQ(RelativeToBase("/ab/c.txt", "/a"), "/ab/c.txt");  // a sibling, not inside
  EXPECT_EQ(RelativeToBase("/x/c.txt", "/a"), "/x/c.txt");
  EXPECT_EQ(RelativeToBase("/a/c.txt", ""), "/a/c.txt");
  EXPECT_EQ(RelativeToBase("", "/a"), "");
  const results::ExplainResult none = ToExplainResult(FilledSummary(), "");
  EXPECT_EQ(none.spikes[0].window_file, "/tmp/rtpulse-run/s1/explain/spike-00001-cpu2.txt");
}

TEST(AddExplainToRunTest, NotesTheUnmeasuredCostAndUnsavedWindowsAndWarnsWithoutATrace) {
  trace::ExplainSummary summary;
  summary.active = true;
  summary.threshold_ns = 200'000;
  trace::ExplainPlan plan;  // no cost phase, no windows folder
  results::LatencyRun run;
  AddExplainToRun(summary, plan, false, "3s", run);
  ASSERT_TRUE(run.explain);
  ASSERT_EQ(run.explain->notes.size(), 2u);
  EXPECT_EQ(run.explain->notes[0],
            "trace cost not measured: -D 3s is shorter than twice the default 2 s cost phase "
            "(give a longer -D, or --explain-cost)");
  EXPECT_EQ(run.explain->notes[1],
            "raw trace windows not saved (give --explain-windows DIR to keep them)");
  EXPECT_TRUE(run.warnings.empty());

  results::LatencyRun given;
  plan.window_dir = "/tmp/windows";
  AddExplainToRun(summary, plan, true, "3s", given);  // --explain-cost 0: no note
  ASSERT_TRUE(given.explain);
  EXPECT_TRUE(given.explain->notes.empty());

  trace::ExplainSummary none;
  none.unavailable_reason = "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)";
  results::LatencyRun without;
  AddExplainToRun(none, plan, false, "3s", without);
  ASSERT_EQ(without.warnings.size(), 1u);
  EXPECT_EQ(without.warnings[0],
            "--explain: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing); the "
            "run goes on without attribution");
  ASSERT_TRUE(without.explain);
  EXPECT_TRUE(without.explain->notes.empty());
}

}  // namespace
}  // namespace rtpulse::suite
