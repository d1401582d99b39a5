// result.json's "explain" object (results/explain_result.h): the round trip keeps every
// field, and the reader refuses every bad field naming its JSON path.
#include "results/explain_result.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/cyclictest_format.h"
#include "results/suite_reader.h"

namespace rtpulse::results {
namespace {

using nlohmann::json;

ExplainResult ExplainTestResult() {
  ExplainResult e;
  e.threshold_ns = 200'000;
  e.active = true;
  e.spikes_seen = 5;
  e.spikes_explained = 2;
  e.spikes_not_explained = 3;
  SpikeExplanation a;
  a.thread = 1;
  a.cpu = 3;
  a.seq = 4711;
  a.expected_ns = 123'456'789'000;
  a.latency_ns = 83'000;
  a.chain = "deferred";
  a.chain_thread = "ktimers/3";
  a.probe_tid = 4242;
  a.verdict = "+83 us: 61 us softirq NET_RX in ktimers/3, 15 us irq 45 eth0, 7 us unaccounted";
  a.parts = {{"softirq", "NET_RX in ktimers/3", 61'000, 2},
             {"irq", "irq 45 eth0", 15'000, 1},
             {"unaccounted", "unaccounted", 7'000, 1}};
  a.window_file = "idle/explain/spike-00001-cpu3.txt";
  a.explained_after_ns = 31'000'000;
  SpikeExplanation b;
  b.thread = 0;
  b.cpu = 0;
  b.seq = std::numeric_limits<uint64_t>::max();
  b.expected_ns = -5;
  b.latency_ns = 0;
  b.chain = "unknown";
  b.complete = false;
  b.incomplete_reason = "lost events on cpu 0";
  b.verdict = "+0 us";
  e.spikes = {a, b};
  e.causes_by_time = {{"softirq", "NET_RX in ktimers/3", 61'000, 1, 61'000},
                      {"irq", "irq 45 eth0", 15'000, 1, 15'000}};
  e.causes_by_count = {{"irq", "irq 45 eth0", 15'000, 1, 15'000}};
  e.instance = "rtpulse-99";
  e.event_set = "full";
  e.events_enabled = {"sched:sched_switch", "irq:irq_handler_entry"};
  e.events_missing = {"ipi:ipi_raise"};
  e.events_read = 123'456;
  e.events_lost = 7;
  e.reader_cpu_ns = 9'000'000;
  e.syscall_filter = "common_pid == 4242 || common_pid == 4243";
  e.probe_tids = {{"abs", {4240}, {}}, {"xthread", {4242}, {4243}}};
  e.cost = ExplainCostResult{1000, 2000, 5'000, 9'000, 5'100, 9'900};
  e.notes = {"3 spikes in the cost phase were not explained"};
  return e;
}

void ExpectSameExplain(const ExplainResult& a, const ExplainResult& b) {
  EXPECT_EQ(ExplainToJson(a), ExplainToJson(b));
  EXPECT_EQ(a.threshold_ns, b.threshold_ns);
  EXPECT_EQ(a.active, b.active);
  EXPECT_EQ(a.unavailable_reason, b.unavailable_reason);
  EXPECT_EQ(a.spikes_seen, b.spikes_seen);
  EXPECT_EQ(a.spikes_explained, b.spikes_explained);
  EXPECT_EQ(a.spikes_not_explained, b.spikes_not_explained);
  ASSERT_EQ(a.spikes.size(), b.spikes.size());
  for (size_t i = 0; i < a.spikes.size(); ++i) {
    const auto& x = a.spikes[i];
    const auto& y = b.spikes[i];
    EXPECT_EQ(x.thread, y.thread);
    EXPECT_EQ(x.cpu, y.cpu);
    EXPECT_EQ(x.seq, y.seq);
    EXPECT_EQ(x.expected_ns, y.expected_ns);
    EXPECT_EQ(x.latency_ns, y.latency_ns);
    EXPECT_EQ(x.chain, y.chain);
    EXPECT_EQ(x.chain_thread, y.chain_thread);
    EXPECT_EQ(x.probe_tid, y.probe_tid);
    EXPECT_EQ(x.complete, y.complete);
    EXPECT_EQ(x.incomplete_reason, y.incomplete_reason);
    EXPECT_EQ(x.verdict, y.verdict);
    EXPECT_EQ(x.window_file, y.window_file);
    EXPECT_EQ(x.explained_after_ns, y.explained_after_ns);
    ASSERT_EQ(x.parts.size(), y.parts.size());
    for (size_t k = 0; k < x.parts.size(); ++k) {
      EXPECT_EQ(x.parts[k].kind, y.parts[k].kind);
      EXPECT_EQ(x.parts[k].name, y.parts[k].name);
      EXPECT_EQ(x.parts[k].ns, y.parts[k].ns);
      EXPECT_EQ(x.parts[k].count, y.parts[k].count);
    }
  }
  ASSERT_EQ(a.causes_by_time.size(), b.causes_by_time.size());
  for (size_t i = 0; i < a.causes_by_time.size(); ++i) {
    EXPECT_EQ(a.causes_by_time[i].name, b.causes_by_time[i].name);
    EXPECT_EQ(a.causes_by_time[i].total_ns, b.causes_by_time[i].total_ns);
    EXPECT_EQ(a.causes_by_time[i].spikes, b.causes_by_time[i].spikes);
    EXPECT_EQ(a.causes_by_time[i].max_ns, b.causes_by_time[i].max_ns);
  }
  EXPECT_EQ(a.causes_by_count.size(), b.causes_by_count.size());
  EXPECT_EQ(a.instance, b.instance);
  EXPECT_EQ(a.event_set, b.event_set);
  EXPECT_EQ(a.events_enabled, b.events_enabled);
  EXPECT_EQ(a.events_missing, b.events_missing);
  EXPECT_EQ(a.events_read, b.events_read);
  EXPECT_EQ(a.events_lost, b.events_lost);
  EXPECT_EQ(a.reader_cpu_ns, b.reader_cpu_ns);
  ASSERT_EQ(a.cost.has_value(), b.cost.has_value());
  if (a.cost) {
    EXPECT_EQ(a.cost->samples_without, b.cost->samples_without);
    EXPECT_EQ(a.cost->samples_with, b.cost->samples_with);
    EXPECT_EQ(a.cost->p50_without_ns, b.cost->p50_without_ns);
    EXPECT_EQ(a.cost->p99_without_ns, b.cost->p99_without_ns);
    EXPECT_EQ(a.cost->p50_with_ns, b.cost->p50_with_ns);
    EXPECT_EQ(a.cost->p99_with_ns, b.cost->p99_with_ns);
  }
  EXPECT_EQ(a.notes, b.notes);
}

TEST(ExplainResult, RoundTripThroughTextKeepsEveryField) {
  const ExplainResult e = ExplainTestResult();
  // Through text, as result.json is read back (numbers come back unsigned where >= 0).
  const json j = json::parse(ExplainToJson(e).dump(2));
  auto back = ExplainFromJson(j);
  ASSERT_TRUE(back) << back.error().message;
  ExpectSameExplain(e, *back);
  EXPECT_EQ(j["spikes"][0]["parts"][1]["name"], "irq 45 eth0");
  EXPECT_EQ(j["cost"]["p99_with_ns"], 9'900);
  EXPECT_EQ(j["trace"]["events_lost"], 7);
}

TEST(ExplainResult, InactiveWithoutCostRoundTrips) {
  ExplainResult e;
  e.threshold_ns = 1;
  e.active = false;
  e.unavailable_reason = "no tracefs at /nonexistent (mount -t tracefs nodev /sys/kernel/tracing)";
  e.spikes_seen = 4;
  e.spikes_not_explained = 4;
  const json j = json::parse(ExplainToJson(e).dump());
  EXPECT_TRUE(j["cost"].is_null());
  auto back = ExplainFromJson(j);
  ASSERT_TRUE(back) << back.error().message;
  ExpectSameExplain(e, *back);
  EXPECT_FALSE(back->cost.has_value());
}

/// The reader's message for `j` changed by `edit`; "" when it was accepted.
template <typename F>
std::string ExplainErrorAfter(F edit) {
  json j = json::parse(ExplainToJson(ExplainTestResult()).dump());
  edit(j);
  auto r = ExplainFromJson(j);
  if (r) return "";
  EXPECT_EQ(r.error().code, ExitCode::kUsage);
  return r.error().message;
}

struct ExplainBadField {
  const char* pointer;  ///< JSON pointer into the object.
  json value;           ///< Replacement; a discarded value removes the field.
  const char* path;     ///< What the message must name.
};

TEST(ExplainResult, EveryBadFieldIsNamedByItsPath) {
  const json missing = json(json::value_t::discarded);
  const std::vector<ExplainBadField> cases = {
      {"/threshold_ns", "200", "explain.threshold_ns"},
      {"/threshold_ns", 0, "explain.threshold_ns"},
      {"/threshold_ns", missing, "explain.threshold_ns"},
      {"/active", 1, "explain.active"},
      {"/active", missing, "explain.active"},
      {"/unavailable_reason", 3, "explain.unavailable_reason"},
      {"/spikes_seen", -1, "explain.spikes_seen"},
      {"/spikes_seen", 1.5, "explain.spikes_seen"},
      {"/spikes_explained", missing, "explain.spikes_explained"},
      {"/spikes_not_explained", "3", "explain.spikes_not_explained"},
      {"/spikes", json::object(), "explain.spikes"},
      {"/spikes/1", 7, "explain.spikes[1]"},
      {"/spikes/0/thread", "1", "explain.spikes[0].thread"},
      {"/spikes/0/thread", 1LL << 40, "explain.spikes[0].thread"},
      {"/spikes/0/cpu", -1, "explain.spikes[0].cpu"},
      {"/spikes/0/cpu", missing, "explain.spikes[0].cpu"},
      {"/spikes/0/seq", -3, "explain.spikes[0].seq"},
      {"/spikes/1/expected_ns", "x", "explain.spikes[1].expected_ns"},
      {"/spikes/0/latency_ns", -83000, "explain.spikes[0].latency_ns"},
      {"/spikes/0/latency_ns", 84000, "explain.spikes[0].parts"},
      {"/spikes/0/chain", "sideways", "explain.spikes[0].chain"},
      {"/spikes/0/chain_thread", nullptr, "explain.spikes[0].chain_thread"},
      {"/spikes/0/probe_tid", true, "explain.spikes[0].probe_tid"},
      {"/spikes/0/complete", "yes", "explain.spikes[0].complete"},
      {"/spikes/0/incomplete_reason", missing, "explain.spikes[0].incomplete_reason"},
      {"/spikes/0/verdict", 83, "explain.spikes[0].verdict"},
      {"/spikes/0/window_file", 1, "explain.spikes[0].window_file"},
      {"/spikes/0/explained_after_ns", -1, "explain.spikes[0].explained_after_ns"},
      {"/spikes/0/parts", "none", "explain.spikes[0].parts"},
      {"/spikes/0/parts/2", "x", "explain.spikes[0].parts[2]"},
      {"/spikes/0/parts/1/kind", "hypervisor", "explain.spikes[0].parts[1].kind"},
      {"/spikes/0/parts/1/name", missing, "explain.spikes[0].parts[1].name"},
      {"/spikes/0/parts/1/ns", -15000, "explain.spikes[0].parts[1].ns"},
      {"/spikes/0/parts/1/ns", 16000, "explain.spikes[0].parts"},
      {"/spikes/0/parts/1/count", -1, "explain.spikes[0].parts[1].count"},
      {"/spikes/0/parts/1/count", 1LL << 33, "explain.spikes[0].parts[1].count"},
      {"/causes_by_time", nullptr, "explain.causes_by_time"},
      {"/causes_by_time/0/kind", "disk", "explain.causes_by_time[0].kind"},
      {"/causes_by_time/0/name", 1, "explain.causes_by_time[0].name"},
      {"/causes_by_time/0/total_ns", -1, "explain.causes_by_time[0].total_ns"},
      {"/causes_by_time/0/spikes", -1, "explain.causes_by_time[0].spikes"},
      {"/causes_by_time/1/max_ns", 15001, "explain.causes_by_time[1].max_ns"},
      {"/causes_by_count/0/max_ns", missing, "explain.causes_by_count[0].max_ns"},
      {"/causes_by_count", missing, "explain.causes_by_count"},
      {"/trace", "rtpulse-99", "explain.trace"},
      {"/trace/instance", missing, "explain.trace.instance"},
      {"/trace/event_set", "most", "explain.trace.event_set"},
      {"/trace/event_set", 1, "explain.trace.event_set"},
      {"/trace/events_enabled", "sched:sched_switch", "explain.trace.events_enabled"},
      {"/trace/events_missing/0", 5, "explain.trace.events_missing[0]"},
      {"/trace/events_read", -1, "explain.trace.events_read"},
      {"/trace/events_lost", missing, "explain.trace.events_lost"},
      {"/trace/reader_cpu_ns", -1, "explain.trace.reader_cpu_ns"},
      {"/trace/syscall_filter", "common_pid == 1", "explain.trace.syscall_filter"},
      {"/trace/syscall_filter/applied", false, "explain.trace.syscall_filter.applied"},
      {"/trace/syscall_filter/filter", 3, "explain.trace.syscall_filter.filter"},
      {"/trace/syscall_filter/reason", missing, "explain.trace.syscall_filter.reason"},
      {"/probe_tids", 5, "explain.probe_tids"},
      {"/probe_tids/1", "xthread", "explain.probe_tids[1]"},
      {"/probe_tids/0/wake", 1, "explain.probe_tids[0].wake"},
      {"/probe_tids/0/tids/0", -4, "explain.probe_tids[0].tids[0]"},
      {"/probe_tids/1/tids", "4242", "explain.probe_tids[1].tids"},
      {"/probe_tids/1/helper_tids", missing, "explain.probe_tids[1].helper_tids"},
      {"/cost", 3, "explain.cost"},
      {"/cost", missing, "explain.cost"},
      {"/cost/samples_without", -1, "explain.cost.samples_without"},
      {"/cost/samples_with", missing, "explain.cost.samples_with"},
      {"/cost/p50_without_ns", "5us", "explain.cost.p50_without_ns"},
      {"/cost/p99_without_ns", missing, "explain.cost.p99_without_ns"},
      {"/cost/p50_with_ns", 1.5, "explain.cost.p50_with_ns"},
      {"/cost/p99_with_ns", nullptr, "explain.cost.p99_with_ns"},
      {"/notes", "one note", "explain.notes"},
      {"/notes/0", 1, "explain.notes[0]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.pointer) + " = " + c.value.dump());
    const std::string message = ExplainErrorAfter([&](json& j) {
      const json::json_pointer ptr(c.pointer);
      if (c.value.is_discarded()) {
        j.at(ptr.parent_pointer()).erase(ptr.back());
      } else {
        j[ptr] = c.value;
      }
    });
    EXPECT_NE(message.find(c.path), std::string::npos) << message;
  }
}

TEST(ExplainResult, TheProbeTidsAndTheSyscallFilterRoundTripAndOlderFilesHaveNone) {
  const json j = ExplainToJson(ExplainTestResult());
  EXPECT_EQ(j["trace"]["syscall_filter"],
            (json{{"applied", true},
                  {"filter", "common_pid == 4242 || common_pid == 4243"},
                  {"reason", ""}}));
  EXPECT_EQ(j["probe_tids"][1],
            (json{{"wake", "xthread"}, {"tids", {4242}}, {"helper_tids", {4243}}}));
  json old = j;
  old["trace"].erase("syscall_filter");
  old.erase("probe_tids");
  auto back = ExplainFromJson(old);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back->syscall_filter.empty());
  EXPECT_TRUE(back->probe_tids.empty());
  json lean = j;
  lean["trace"]["syscall_filter"] = {{"applied", false}, {"filter", ""}, {"reason", "lean"}};
  auto not_applied = ExplainFromJson(lean);
  ASSERT_TRUE(not_applied) << not_applied.error().message;
  EXPECT_EQ(not_applied->syscall_note, "lean");
}

TEST(ExplainResult, AFileFromBeforeTheEventSetTracedTheFullSet) {
  json j = ExplainToJson(ExplainTestResult());
  ASSERT_EQ(j["trace"]["event_set"], "full");
  j["trace"]["event_set"] = "lean";
  auto lean = ExplainFromJson(j);
  ASSERT_TRUE(lean) << lean.error().message;
  EXPECT_EQ(lean->event_set, "lean");
  j["trace"].erase("event_set");
  auto old = ExplainFromJson(j);
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(old->event_set, "full");
}

TEST(ExplainResult, CountsThatDoNotAddUpAreRefused) {
  EXPECT_NE(ExplainErrorAfter([](json& j) { j["spikes_seen"] = 6; }).find("is not spikes_seen 6"),
            std::string::npos);
  // Two spikes listed, one claimed explained.
  const std::string listed = ExplainErrorAfter([](json& j) {
    j["spikes_explained"] = 1;
    j["spikes_not_explained"] = 4;
  });
  EXPECT_NE(listed.find("explain.spikes: 2 spikes listed but spikes_explained is 1"),
            std::string::npos)
      << listed;
  const std::string inactive = ExplainErrorAfter([](json& j) { j["active"] = false; });
  EXPECT_NE(inactive.find("explain.unavailable_reason"), std::string::npos) << inactive;
  EXPECT_NE(ExplainErrorAfter([](json& j) { j = json::array(); }).find("explain:"),
            std::string::npos);
}

TEST(ExplainResult, TheUnmodifiedFixtureIsAccepted) {
  // The cases above fail for their edit, not for the fixture.
  EXPECT_EQ(ExplainErrorAfter([](json&) {}), "");
}

/// The latency JSON (and so result.json's scenarios[].latency) carries it as rtpulse.explain,
/// and the suite reader reads it back, refusing a bad one with its full path.
TEST(ExplainResult, LatencyDocumentCarriesItAndTheReaderReadsItBack) {
  LatencyRun run;
  PathRun path;
  path.wake = "abs";
  ProbeResult probe;
  probe.wake = "abs";
  probe.histogram.Record(5'000);
  probe.histogram.Record(283'000);
  probe.periods_elapsed = 2;
  path.probes.push_back(probe);
  run.paths.push_back(path);
  run.explain = ExplainTestResult();
  json j = json::parse(ToJson(run, false).dump());
  ASSERT_TRUE(j.at("rtpulse").contains("explain"));
  auto back = LatencyRunFromJson(j);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->explain.has_value());
  ExpectSameExplain(*run.explain, *back->explain);

  run.explain.reset();
  auto without = LatencyRunFromJson(json::parse(ToJson(run, false).dump()));
  ASSERT_TRUE(without) << without.error().message;
  EXPECT_FALSE(without->explain.has_value());

  j["rtpulse"]["explain"]["spikes"][0]["cpu"] = "three";
  auto bad = LatencyRunFromJson(j);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ExitCode::kUsage);
  EXPECT_NE(bad.error().message.find("rtpulse.explain.spikes[0].cpu"), std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace rtpulse::results
