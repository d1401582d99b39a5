// Assertions on the tracing part of the QEMU proof guest (tests/kernel/qemu/guest.d/trace.sh,
// run by the guest's /init on the PREEMPT_RT kernel with the timerlat and osnoise tracers):
// `rtpulse check` reports them, `latency --wake timerlat` measures with the kernel's user-space
// interface, its counts agree with the kernel's own activation numbers and the run time, and
// osnoise/ is exactly as before afterwards (also after SIGINT); a busy tracer is exit 3;
// `--explain` names the deferred path's ktimers thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "guest_console.h"

namespace rtpulse {
namespace {

using guest::Console;

std::string TraceGuestValue(const std::string& key) {
  auto it = Console().values.find(key);
  return it == Console().values.end() ? "<absent>" : it->second;
}

std::string TraceGuestSection(const std::string& key) {
  auto it = Console().sections.find(key);
  return it == Console().sections.end() ? "" : it->second;
}

nlohmann::json TraceGuestJson(const std::string& key) {
  const std::string text = TraceGuestSection(key);
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << key << " is not JSON (" << e.what() << "):\n" << text;
    return {};
  }
}

class QemuTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Console().loaded) GTEST_SKIP() << "no console log: kernel_qemu_boot did not run";
    ASSERT_NE(TraceGuestValue("guest.d-exit trace"), "<absent>") << "trace.sh did not run";
  }
};

/// The path named `wake` of a latency JSON, with its thread objects.
struct TracePath {
  nlohmann::json path;
  std::vector<nlohmann::json> threads;
};
TracePath FindTracePath(const nlohmann::json& doc, const std::string& wake) {
  TracePath out;
  for (const auto& p : doc["rtpulse"]["paths"]) {
    if (p["wake"] != wake) continue;
    out.path = p;
    for (const auto& index : p["threads"]) {
      out.threads.push_back(doc["thread"][std::to_string(index.get<int>())]);
    }
  }
  return out;
}

TEST_F(QemuTrace, CheckReportsTheTimerlatTracerAndItsUserSpaceInterface) {
  EXPECT_NE(TraceGuestValue("trace-available-tracers").find("timerlat"), std::string::npos);
  const auto check = TraceGuestJson("trace-check.json");
  std::map<std::string, bool> present;
  for (const auto& f : check["tracing"]) present[f["name"]] = f["present"];
  for (const char* name : {"tracefs", "timerlat tracer", "osnoise tracer",
                           "timerlat user-space interface", "sched events", "softirq events"}) {
    ASSERT_TRUE(present.count(name)) << name << "\n" << check["tracing"].dump(1);
    EXPECT_TRUE(present[name]) << name << "\n" << check["tracing"].dump(1);
  }
}

TEST_F(QemuTrace, TimerlatGivesBothHistogramsCountedAgainstTheKernelsSequence) {
  ASSERT_EQ(TraceGuestValue("trace-timerlat-exit"), "0") << TraceGuestSection("trace-timerlat");
  const auto doc = TraceGuestJson("trace-timerlat.json");
  ASSERT_TRUE(doc.is_object());
  const TracePath thread = FindTracePath(doc, "timerlat");
  const TracePath irq = FindTracePath(doc, "timerlat-irq");
  ASSERT_EQ(thread.threads.size(), 1U) << doc["rtpulse"]["paths"].dump(1);
  ASSERT_EQ(irq.threads.size(), 1U);
  const int64_t period_ns = 1'000'000;
  for (const TracePath* p : {&thread, &irq}) {
    const auto& t = p->threads[0];
    EXPECT_EQ(t["cpu"], 1);
    EXPECT_EQ(t["interval_ns"], period_ns);
    EXPECT_EQ(t["policy"], "fifo");
    EXPECT_EQ(t["priority"], 90);
    const uint64_t cycles = t["cycles"];
    const uint64_t missed = t["missed_activations"];
    const uint64_t skipped = t["skipped_periods"];
    const uint64_t periods = t["periods_elapsed"];
    // Every activation the kernel numbered is a sample or counted as missed (lost record);
    // the periods it skipped behind a late thread (the thread path's) make up the rest.
    EXPECT_EQ(cycles + missed + skipped, periods) << t.dump(1);
    if (p == &irq) {
      EXPECT_EQ(t["skipped_periods"], 0);
    }
    // The histogram's buckets hold every sample.
    uint64_t in_buckets = 0;
    for (const auto& b : t["histogram_log"]) in_buckets += b[2].get<uint64_t>();
    EXPECT_EQ(in_buckets, cycles);
    // One period after another from the first activation: the count follows the run time
    // (the user-space thread starts after the trace, so a few periods less, never more).
    const int64_t duration_ns = p->path["duration_ns"];
    const double expected = static_cast<double>(duration_ns) / static_cast<double>(period_ns);
    // The IRQ path does not count the periods the kernel skipped (no IRQ happened); the thread
    // path does: with them, both cover the run.
    const uint64_t all_periods =
        periods + (p == &irq ? thread.threads[0]["skipped_periods"].get<uint64_t>() : 0);
    EXPECT_LE(static_cast<double>(all_periods), expected + 1.0) << duration_ns;
    EXPECT_GE(static_cast<double>(all_periods), expected * 0.8) << duration_ns;
    EXPECT_GT(cycles, 2000U);
  }
  const auto& tt = thread.threads[0];
  const auto& it = irq.threads[0];
  if (tt.contains("per_period")) {
    // Per period: every sample and every skipped period once.
    EXPECT_EQ(tt["per_period"]["periods"].get<uint64_t>(),
              tt["cycles"].get<uint64_t>() + tt["skipped_periods"].get<uint64_t>());
  }
  EXPECT_GT(tt["tid"].get<int>(), 0);
  // The thread latency of an activation includes its IRQ latency.
  EXPECT_GE(tt["stats"]["min_ns"].get<int64_t>(), it["stats"]["min_ns"].get<int64_t>());
  if (tt["missed_activations"] == 0 && it["missed_activations"] == 0) {
    EXPECT_GE(tt["stats"]["max_ns"].get<int64_t>(), it["stats"]["max_ns"].get<int64_t>());
  }
  // The IRQ path has the same activations (the last one's thread record may have been in
  // flight at the stop), and names the periods the thread path skipped.
  const uint64_t irq_numbered = it["periods_elapsed"];
  const uint64_t thread_numbered =
      tt["periods_elapsed"].get<uint64_t>() - tt["skipped_periods"].get<uint64_t>();
  EXPECT_TRUE(irq_numbered == thread_numbered || irq_numbered == thread_numbered + 1)
      << irq_numbered << " " << thread_numbered;
  if (tt["skipped_periods"].get<uint64_t>() > 0) {
    EXPECT_NE(it["notes"].dump().find(std::to_string(tt["skipped_periods"].get<uint64_t>()) +
                                      " periods were skipped"),
              std::string::npos)
        << it["notes"].dump(1);
  }
  bool user_interface_note = false;
  for (const auto& n : tt["notes"]) {
    user_interface_note = user_interface_note ||
                          n.get<std::string>().find("user-space interface") != std::string::npos;
  }
  EXPECT_TRUE(user_interface_note) << tt["notes"].dump(1);
  // With the user-space interface, the third latency rtla reports: the thread's return to the
  // kernel after each cycle, from the same expiry, so never below the thread's own latency.
  const TracePath user = FindTracePath(doc, "timerlat-user");
  ASSERT_EQ(user.threads.size(), 1U) << doc["rtpulse"]["paths"].dump(1);
  const auto& ut = user.threads[0];
  EXPECT_EQ(ut["cpu"], 1);
  EXPECT_EQ(ut["cycles"].get<uint64_t>() + ut["missed_activations"].get<uint64_t>(),
            ut["periods_elapsed"].get<uint64_t>())
      << ut.dump(1);
  EXPECT_GT(ut["cycles"].get<uint64_t>(), 2000U);
  EXPECT_GE(ut["stats"]["min_ns"].get<int64_t>(), tt["stats"]["min_ns"].get<int64_t>());
  EXPECT_EQ(doc["rtpulse"]["interrupted"], false);
}

TEST_F(QemuTrace, TimerlatWithSmpAndNoOtherFlagMeasuresEveryCpuAtTheBaseInterval) {
  ASSERT_EQ(TraceGuestValue("trace-timerlat-smp-exit"), "0")
      << TraceGuestSection("trace-timerlat-smp");
  const auto doc = TraceGuestJson("trace-timerlat-smp.json");
  ASSERT_TRUE(doc.is_object());
  for (const char* wake : {"timerlat", "timerlat-irq"}) {
    const TracePath p = FindTracePath(doc, wake);
    ASSERT_EQ(p.threads.size(), 2U) << wake << " " << doc["rtpulse"]["paths"].dump(1);
    std::set<int> cpus;
    for (const auto& t : p.threads) {
      cpus.insert(t["cpu"].get<int>());
      EXPECT_EQ(t["interval_ns"], 1'000'000) << wake;  // -i's default on every CPU, no -d
      EXPECT_GT(t["cycles"].get<uint64_t>(), 500U) << wake << " " << t.dump(1);
    }
    EXPECT_EQ(cpus, (std::set<int>{0, 1})) << wake;
  }
}

// suite --wake abs,timerlat (issue 31): the scenario holds the probes' path and the tracer's
// thread and IRQ paths, on both CPUs at the suite's 1 ms period, each for the scenario's 2 s.
TEST_F(QemuTrace, SuiteWithWakeTimerlatMeasuresTheTracerAfterTheProbes) {
  ASSERT_EQ(TraceGuestValue("trace-suite-timerlat-exit"), "0")
      << TraceGuestSection("trace-suite-timerlat");
  const auto doc = TraceGuestJson("trace-suite-timerlat.json");
  ASSERT_TRUE(doc.is_object()) << TraceGuestSection("trace-suite-timerlat");
  std::vector<std::string> order;
  for (const auto& p : doc["rtpulse"]["paths"]) order.push_back(p["wake"]);
  ASSERT_GE(order.size(), 3U) << doc["rtpulse"]["paths"].dump(1);
  EXPECT_EQ(order[0], "abs");
  EXPECT_EQ(order[1], "timerlat");
  EXPECT_EQ(order[2], "timerlat-irq");
  for (const char* wake : {"abs", "timerlat", "timerlat-irq"}) {
    const TracePath p = FindTracePath(doc, wake);
    ASSERT_EQ(p.threads.size(), 2U) << wake;
    std::set<int> cpus;
    for (const auto& t : p.threads) {
      cpus.insert(t["cpu"].get<int>());
      EXPECT_EQ(t["interval_ns"], 1'000'000) << wake;
      EXPECT_GT(t["cycles"].get<uint64_t>(), 1000U) << wake << " " << t.dump(1);
    }
    EXPECT_EQ(cpus, (std::set<int>{0, 1})) << wake;
  }
}

TEST_F(QemuTrace, OsnoiseIsRestoredAfterTheRunAndAfterSigint) {
  const std::string before = TraceGuestValue("trace-osnoise-before");
  ASSERT_NE(before.find("stop_us=5000"), std::string::npos) << before;
  EXPECT_NE(before.find("tracer=nop"), std::string::npos) << before;
  EXPECT_EQ(TraceGuestValue("trace-osnoise-after"), before);
  EXPECT_EQ(TraceGuestValue("trace-timerlat-int-exit"), "0");  // as cyclictest
  EXPECT_EQ(TraceGuestValue("trace-osnoise-after-int"), before);
  const auto doc = TraceGuestJson("trace-timerlat-int.json");
  EXPECT_EQ(doc["rtpulse"]["interrupted"], true);
  const TracePath thread = FindTracePath(doc, "timerlat");
  ASSERT_EQ(thread.threads.size(), 1U);
  EXPECT_GT(thread.threads[0]["cycles"].get<uint64_t>(), 0U);
  EXPECT_LT(thread.path["duration_ns"].get<int64_t>(), 20'000'000'000);
}

TEST_F(QemuTrace, ABusyTracerIsExit3) {
  EXPECT_EQ(TraceGuestValue("trace-timerlat-busy-exit"), "3");
  const std::string out = TraceGuestSection("trace-timerlat-busy");
  EXPECT_NE(out.find("busy"), std::string::npos) << out;
  EXPECT_NE(out.find("osnoise"), std::string::npos) << out;
}

TEST_F(QemuTrace, ExplainNamesTheDeferredPathsSoftirqThread) {
  if (TraceGuestValue("trace-explain-supported") != "yes") {
    GTEST_SKIP() << "this rtpulse has no --explain yet";
  }
  ASSERT_EQ(TraceGuestValue("trace-explain-exit"), "0") << TraceGuestSection("trace-explain");
  const auto doc = TraceGuestJson("trace-explain.json");
  const auto& explain =
      doc["rtpulse"].contains("explain") ? doc["rtpulse"]["explain"] : doc["explain"];
  ASSERT_TRUE(explain.is_object()) << doc.dump(1).substr(0, 2000);
  EXPECT_EQ(explain["active"], true) << explain.dump(1);
  ASSERT_GT(explain["spikes_explained"].get<uint64_t>(), 0U) << explain.dump(1);
  bool ktimers = false;
  for (const auto& s : explain["spikes"]) {
    // The softirq thread that expires the timer: ktimers/N where the kernel has it, else
    // ksoftirqd/N (plain 6.12 with PREEMPT_RT, this guest; docs/wake-paths.md).
    const std::string thread_name = s["chain_thread"];
    if (s["chain"] == "deferred" &&
        (thread_name.rfind("ktimers/", 0) == 0 || thread_name.rfind("ksoftirqd/", 0) == 0)) {
      ktimers = ktimers || s["verdict"].get<std::string>().find(thread_name) != std::string::npos;
    }
  }
  EXPECT_TRUE(ktimers) << explain["spikes"].dump(1).substr(0, 4000);
  EXPECT_NE(TraceGuestSection("trace-explain").find("explain: "), std::string::npos);
}

TEST_F(QemuTrace, ExplainWorksOnTimerlatWhoseTimerIsHardIrq) {
  if (TraceGuestValue("trace-explain-supported") != "yes") {
    GTEST_SKIP() << "this rtpulse has no --explain yet";
  }
  ASSERT_EQ(TraceGuestValue("trace-timerlat-explain-exit"), "0")
      << TraceGuestSection("trace-timerlat-explain");
  const auto doc = TraceGuestJson("trace-timerlat-explain.json");
  const auto& explain = doc["rtpulse"]["explain"];
  ASSERT_TRUE(explain.is_object()) << doc.dump(1).substr(0, 2000);
  EXPECT_EQ(explain["active"], true) << explain.dump(1);
  ASSERT_GT(explain["spikes_explained"].get<uint64_t>(), 0U) << explain.dump(1);
  // timerlat's hrtimer expires in hard IRQ context: its chains are direct, never through a
  // softirq thread.
  size_t direct = 0;
  for (const auto& s : explain["spikes"]) {
    EXPECT_NE(s["chain"], "deferred") << s.dump(1);
    if (s["chain"] == "direct") ++direct;
  }
  EXPECT_GT(direct, 0U) << explain["spikes"].dump(1).substr(0, 4000);
  // Both timerlat paths are still there beside the explanation.
  EXPECT_EQ(FindTracePath(doc, "timerlat").threads.size(), 1U);
  EXPECT_EQ(FindTracePath(doc, "timerlat-irq").threads.size(), 1U);
}

}  // namespace
}  // namespace rtpulse
