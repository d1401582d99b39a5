// `rtpulse latency --explain` end to end on this machine's real tracefs: a known blocker (the
// --inject thread) named with its duration, loopback network load for softirq time, every
// saved raw window recomputed by tests/trace/explain_truth.py to the ns, the unavailable
// paths (no tracefs, not root), SIGINT mid-run, and the bad-input table.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/explain_window_support.h"
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "support/tracefs.h"

namespace rtpulse {
namespace {

using testutil::ProcessOptions;
using testutil::ReadFile;
using testutil::RunProcess;
using testutil::RunRtpulse;
using testutil::SyscallPids;
using testutil::TempDir;

constexpr const char* kTracing = "/sys/kernel/tracing";

std::string ExplainSource(const std::string& relative) {
  return std::string(RTPULSE_SOURCE_DIR) + "/" + relative;
}

/// rtpulse-PID instances whose process is gone: what a run that cleaned up leaves none of.
/// Other programs' live instances (tests running beside this one) are not counted.
std::vector<std::string> RtpulseInstances() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(kTracing) + "/instances", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("rtpulse-", 0) != 0) continue;
    const std::string pid = name.substr(8, name.find('-', 8) - 8);
    if (!std::filesystem::exists("/proc/" + pid)) out.push_back(name);
  }
  return out;
}

/// The 2-CPU machine's second CPU (the first takes the shell and the build).
std::string ExplainCpu() {
  return sysconf(_SC_NPROCESSORS_ONLN) > 1 ? "1" : "0";
}

class LatencyExplainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = testutil::TracefsUnavailable(); !why.empty()) GTEST_SKIP() << why;
  }
};

/// A SCHED_OTHER busy loop pinned to `cpu` for the life of the object. This kernel (6.x on
/// KVM) records no sched_switch out of the idle task; the attribution infers those switches
/// from common_pid (docs/explain.md), but the test keeps the CPU busy so its spikes do not
/// depend on that inference (without it the test also passed, but not reliably under load).
class ExplainCpuSpinner {
 public:
  explicit ExplainCpuSpinner(int cpu) {
    pid_ = fork();
    if (pid_ == 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(static_cast<size_t>(cpu), &set);
      sched_setaffinity(0, sizeof set, &set);
      for (;;) {
        asm volatile("" ::: "memory");
      }
    }
  }
  ~ExplainCpuSpinner() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  ExplainCpuSpinner(const ExplainCpuSpinner&) = delete;
  ExplainCpuSpinner& operator=(const ExplainCpuSpinner&) = delete;

 private:
  pid_t pid_ = -1;
};

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int64_t MonotonicNowNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

/// Every spike: the parts add up to the lateness to the ns, and it was explained after its
/// wake-up and before the run exited (`exited_ns`, CLOCK_MONOTONIC read once the process was
/// gone). How soon after the wake-up is a speed target: bench/explain/run judges it (1 s).
void ExpectSpikesAddUp(const nlohmann::json& explain, int64_t exited_ns) {
  for (const auto& s : explain["spikes"]) {
    int64_t sum = 0;
    for (const auto& p : s["parts"]) sum += p["ns"].get<int64_t>();
    EXPECT_EQ(sum, s["latency_ns"].get<int64_t>()) << s.dump();
    const int64_t woke_ns = s["expected_ns"].get<int64_t>() + s["latency_ns"].get<int64_t>();
    EXPECT_GE(s["explained_after_ns"].get<int64_t>(), 0) << s.dump();
    EXPECT_LT(woke_ns + s["explained_after_ns"].get<int64_t>(), exited_ns) << s.dump();
  }
}

/// Every saved window recomputed by explain_truth.py: the parts equal the JSON's exactly.
/// Returns how many windows were compared.
size_t ExpectWindowsMatchTruth(const nlohmann::json& explain, const std::string& base) {
  size_t compared = 0;
  for (const auto& s : explain["spikes"]) {
    const std::string file = s["window_file"].get<std::string>();
    if (file.empty()) continue;
    const std::string path = file[0] == '/' ? file : base + "/" + file;
    const int64_t expected = s["expected_ns"].get<int64_t>();
    const int64_t actual = expected + s["latency_ns"].get<int64_t>();
    auto r = RunProcess({"/usr/bin/python3", ExplainSource("tests/trace/explain_truth.py"), path,
                         "--cpu", std::to_string(s["cpu"].get<int>()), "--expected",
                         std::to_string(expected), "--actual", std::to_string(actual), "--tid",
                         std::to_string(s["probe_tid"].get<int>())});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) continue;
    const auto truth = nlohmann::json::parse(r.out);
    std::map<std::string, int64_t> want;
    std::map<std::string, int64_t> got;
    for (const auto& p : truth["parts"]) {
      want[p["kind"].get<std::string>() + " " + p["name"].get<std::string>()] +=
          p["ns"].get<int64_t>();
    }
    for (const auto& p : s["parts"]) {
      got[p["kind"].get<std::string>() + " " + p["name"].get<std::string>()] +=
          p["ns"].get<int64_t>();
    }
    EXPECT_EQ(got, want) << "window " << path << "\nrtpulse: " << s.dump()
                         << "\ntruth: " << truth.dump();
    ++compared;
  }
  return compared;
}

/// `latency` with one SCHED_FIFO 80 probe on ExplainCpu() at 1 ms for `duration`, the
/// 500 us @ 10 Hz injected blocker, --explain 250 with no cost phase, the raw windows saved
/// to `windows` and the JSON to `json`; `extra` appended.
std::vector<std::string> InjectedExplainArgs(const std::string& duration,
                                             const std::string& windows, const std::string& json,
                                             const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"latency",    "-a",
                                   ExplainCpu(), "-t",
                                   "1",          "-p",
                                   "80",         "-i",
                                   "1000",       "-D",
                                   duration,     "--inject",
                                   "500us@10Hz", "--explain",
                                   "250",        "--explain-cost",
                                   "0",          "--explain-windows",
                                   windows,      "--json",
                                   json};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

/// Whether a spike of InjectedExplainArgs' run is on an injection deadline: the injector's
/// k-th spin starts k x 100 ms after the grid origin, the deadline of the 1 ms probe's seq
/// 100k - 1. Spikes elsewhere are the host's stalls (4-15 ms here), which no injector explains.
bool OnInjectionDeadline(const nlohmann::json& spike) {
  return spike["seq"].get<uint64_t>() % 100 == 99;
}

TEST_F(LatencyExplainTest, InjectedBlockerIsNamedWithItsDuration) {
  TempDir dir;
  constexpr int64_t kDelayNs = 500'000;
  const ExplainCpuSpinner spinner(std::stoi(ExplainCpu()));
  auto r = RunRtpulse(InjectedExplainArgs("6s", dir.File("win"), dir.File("r.json")));
  const int64_t exited_ns = MonotonicNowNs();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
  const auto& x = j["rtpulse"]["explain"];
  ASSERT_TRUE(x["active"].get<bool>()) << x.dump();
  EXPECT_EQ(x["threshold_ns"], 250'000);
  const uint64_t injections = j["thread"]["0"]["injections"].get<uint64_t>();
  EXPECT_GE(injections, 50u);
  // Every injection makes a spike (bar the host's stalls); the counts add up.
  EXPECT_GE(x["spikes_seen"].get<uint64_t>(), injections * 8 / 10);
  EXPECT_EQ(x["spikes_seen"].get<uint64_t>(),
            x["spikes_explained"].get<uint64_t>() + x["spikes_not_explained"].get<uint64_t>());
  EXPECT_EQ(x["spikes"].size(), x["spikes_explained"].get<uint64_t>());
  ExpectSpikesAddUp(x, exited_ns);

  // The injected spikes (on an injection deadline, late by at least 3/4 of the spin) name the
  // injector thread.
  std::vector<int64_t> blocker_ns;
  size_t injected_spikes = 0;
  for (const auto& s : x["spikes"]) {
    if (!OnInjectionDeadline(s) || s["latency_ns"].get<int64_t>() < kDelayNs * 3 / 4) continue;
    ++injected_spikes;
    for (const auto& p : s["parts"]) {
      if (p["kind"] == "thread" && p["name"].get<std::string>().rfind("rtpulse-inject ", 0) == 0) {
        blocker_ns.push_back(p["ns"].get<int64_t>());
        EXPECT_NE(p["name"].get<std::string>().find(" 81"), std::string::npos)
            << "the injector runs at the probe's priority + 1: " << p.dump();
      }
    }
  }
  ASSERT_GE(injected_spikes, injections * 7 / 10);
  // Most, not all: a host stall or a missed idle switch (docs/explain.md#limits) takes some.
  EXPECT_GE(blocker_ns.size() * 3, injected_spikes * 2) << x.dump(1);
  const int64_t median = Median(blocker_ns);
  EXPECT_GT(median, kDelayNs * 9 / 10) << x.dump(1);
  EXPECT_LT(median, kDelayNs * 12 / 10) << x.dump(1);

  // The live verdict lines: one per explained spike, in the agreed format.
  size_t verdicts = 0;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) {
    if (line.rfind("explain: T:0 cpu " + ExplainCpu() + " seq ", 0) == 0) ++verdicts;
  }
  EXPECT_EQ(verdicts, x["spikes_explained"].get<uint64_t>()) << r.err;
  // The cause table's first row by total time is the injector, with the JSON's total.
  ASSERT_FALSE(x["causes_by_time"].empty());
  const auto& top = x["causes_by_time"][0];
  EXPECT_EQ(top["kind"], "thread");
  EXPECT_EQ(top["name"].get<std::string>().rfind("rtpulse-inject ", 0), 0u) << top.dump();
  int64_t total = 0;
  for (int64_t v : blocker_ns) total += v;
  EXPECT_LE(total, top["total_ns"].get<int64_t>());
  char row_total[32];
  std::snprintf(row_total, sizeof row_total, "%.1f",
                static_cast<double>(top["total_ns"].get<int64_t>()) / 1e3);
  EXPECT_NE(r.out.find(top["name"].get<std::string>()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(row_total), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("explain: spikes above 250.0 us: " +
                       std::to_string(x["spikes_seen"].get<uint64_t>()) + " seen, " +
                       std::to_string(x["spikes_explained"].get<uint64_t>()) + " explained"),
            std::string::npos)
      << r.out;
  // Without --samples the rings were the explainer's alone: no samples log is claimed.
  EXPECT_EQ(j["thread"]["0"]["samples_logged"], 0);
  EXPECT_GE(ExpectWindowsMatchTruth(x, dir.path()), blocker_ns.size());
  EXPECT_TRUE(RtpulseInstances().empty());
}

bool ExplainEnabled(const nlohmann::json& explain, const std::string& id) {
  for (const auto& e : explain["trace"]["events_enabled"]) {
    if (e.get<std::string>() == id) return true;
  }
  return false;
}

// The default (lean) trace holds only the attribution's events; --explain-events full adds
// the rest, and its windows give the same parts as the truth script as well.
TEST_F(LatencyExplainTest, EventSetLeanByDefaultFullOnRequest) {
  TempDir dir;
  const ExplainCpuSpinner spinner(std::stoi(ExplainCpu()));
  for (const std::string set : {"", "full"}) {
    std::vector<std::string> extra;
    if (!set.empty()) extra = {"--explain-events", set};
    auto r = RunRtpulse(
        InjectedExplainArgs("4s", dir.File("win-" + set), dir.File("r-" + set + ".json"), extra));
    const int64_t exited_ns = MonotonicNowNs();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(ReadFile(dir.File("r-" + set + ".json")));
    const auto& x = j["rtpulse"]["explain"];
    ASSERT_TRUE(x["active"].get<bool>()) << x.dump();
    const bool full = set == "full";
    EXPECT_EQ(x["trace"]["event_set"], full ? "full" : "lean");
    EXPECT_TRUE(ExplainEnabled(x, "sched:sched_switch")) << x["trace"].dump();
    EXPECT_TRUE(ExplainEnabled(x, "sched:sched_waking")) << x["trace"].dump();
    EXPECT_EQ(ExplainEnabled(x, "sched:sched_wakeup"), full) << x["trace"].dump();
    EXPECT_EQ(ExplainEnabled(x, "timer:hrtimer_start"), full) << x["trace"].dump();
    EXPECT_NE(r.out.find(std::string("(") + (full ? "full" : "lean") + " events)"),
              std::string::npos)
        << r.out;
    // The probe's syscalls: traced with the full set only; lean says why not.
    ASSERT_EQ(x["probe_tids"].size(), 1u) << x.dump();
    EXPECT_EQ(x["trace"]["syscall_filter"]["applied"], full) << x["trace"].dump();
    EXPECT_EQ(ExplainEnabled(x, "raw_syscalls:sys_exit"), full) << x["trace"].dump();
    if (!full) {
      EXPECT_NE(x["trace"]["syscall_filter"]["reason"].get<std::string>().find("lean"),
                std::string::npos)
          << x["trace"].dump();
    }
    ExpectSpikesAddUp(x, exited_ns);
    size_t named = 0;
    size_t injected = 0;
    for (const auto& s : x["spikes"]) {
      if (!OnInjectionDeadline(s) || s["latency_ns"].get<int64_t>() < 375'000) continue;
      ++injected;
      for (const auto& p : s["parts"]) {
        if (p["kind"] == "thread" &&
            p["name"].get<std::string>().rfind("rtpulse-inject ", 0) == 0) {
          ++named;
        }
      }
    }
    EXPECT_GE(injected, 20u) << x.dump(1);
    EXPECT_GE(named * 3, injected * 2) << x.dump(1);
    EXPECT_GT(ExpectWindowsMatchTruth(x, dir.path()), 0u);
  }
  EXPECT_TRUE(RtpulseInstances().empty());
}

// The probe's own syscalls (--explain-events full): before each wake path measures, the
// engine publishes every probe thread's tid (and, for xthread, the waker's); the trace's
// raw_syscalls are filtered to exactly those. The saved windows hold sys_enter/sys_exit of
// those tids and of no other task, the spikes carry their path's tid, and the attribution that
// reads the syscalls still gives exactly what the truth script computes from the windows.
TEST_F(LatencyExplainTest, FullSetTracesExactlyTheProbesSyscallsWithTheirTids) {
  TempDir dir;
  const ExplainCpuSpinner spinner(std::stoi(ExplainCpu()));
  auto r = RunRtpulse(InjectedExplainArgs("3s", dir.File("win"), dir.File("r.json"),
                                          {"--wake", "abs,xthread", "--explain-events", "full"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
  const auto& x = j["rtpulse"]["explain"];
  ASSERT_TRUE(x["active"].get<bool>()) << x.dump();
  ASSERT_EQ(x["probe_tids"].size(), 2u) << x.dump();
  const auto& abs = x["probe_tids"][0];
  const auto& xthread = x["probe_tids"][1];
  EXPECT_EQ(abs["wake"], "abs");
  EXPECT_EQ(xthread["wake"], "xthread");
  ASSERT_EQ(abs["tids"].size(), 1u);
  ASSERT_EQ(xthread["tids"].size(), 1u);
  EXPECT_TRUE(abs["helper_tids"].empty()) << abs.dump();
  ASSERT_EQ(xthread["helper_tids"].size(), 1u) << xthread.dump();
  const int abs_tid = abs["tids"][0].get<int>();
  const int xthread_tid = xthread["tids"][0].get<int>();
  const int waker_tid = xthread["helper_tids"][0].get<int>();
  EXPECT_GT(abs_tid, 0);
  EXPECT_GT(xthread_tid, 0);
  EXPECT_GT(waker_tid, 0);
  EXPECT_NE(abs_tid, xthread_tid);
  EXPECT_NE(waker_tid, xthread_tid);
  // The tids are the probes' own: the same as the run's per-thread record.
  EXPECT_EQ(j["thread"]["0"]["wake"], "abs");
  EXPECT_EQ(j["thread"]["0"]["tid"].get<int>(), abs_tid);
  EXPECT_EQ(j["thread"]["1"]["wake"], "xthread");
  EXPECT_EQ(j["thread"]["1"]["tid"].get<int>(), xthread_tid);
  // In force at the end: the last path's set, exactly.
  EXPECT_EQ(x["trace"]["syscall_filter"]["applied"], true) << x["trace"].dump();
  EXPECT_EQ(x["trace"]["syscall_filter"]["filter"],
            "common_pid == " + std::to_string(xthread_tid) +
                " || common_pid == " + std::to_string(waker_tid));
  EXPECT_TRUE(ExplainEnabled(x, "raw_syscalls:sys_enter")) << x["trace"].dump();
  EXPECT_TRUE(ExplainEnabled(x, "raw_syscalls:sys_exit")) << x["trace"].dump();
  EXPECT_NE(r.out.find("the probe's syscalls traced (raw_syscalls filter: common_pid == "),
            std::string::npos)
      << r.out;

  const std::vector<int> ours = {abs_tid, xthread_tid, waker_tid};
  std::map<int, size_t> spikes_of;  // probe tid -> spikes
  size_t own_lines = 0;
  size_t waker_lines = 0;
  for (const auto& spike : x["spikes"]) {
    const int tid = spike["probe_tid"].get<int>();
    EXPECT_TRUE(tid == abs_tid || tid == xthread_tid) << spike.dump();
    ++spikes_of[tid];
    const std::string file = spike["window_file"].get<std::string>();
    if (file.empty()) continue;
    for (int pid : SyscallPids(ReadFile(file[0] == '/' ? file : dir.path() + "/" + file))) {
      EXPECT_NE(std::find(ours.begin(), ours.end(), pid), ours.end())
          << "a syscall of task " << pid << " in " << file;
      if (pid == tid) ++own_lines;
      if (pid == waker_tid) ++waker_lines;
    }
  }
  EXPECT_GE(spikes_of[abs_tid], 10u) << x.dump(1);
  EXPECT_GE(spikes_of[xthread_tid], 10u) << x.dump(1);
  EXPECT_GT(own_lines, 0u);
  EXPECT_GT(waker_lines, 0u);
  EXPECT_GT(ExpectWindowsMatchTruth(x, dir.path()), 0u);
  EXPECT_TRUE(RtpulseInstances().empty());
}

TEST_F(LatencyExplainTest, LoopbackNetworkLoadShowsAsNetRxSoftirq) {
  TempDir dir;
  // A UDP sender to 127.0.0.1 on the probe's CPU: loopback delivery is NET_RX softirq work
  // on the sending CPU. It runs until the shell kills it after rtpulse exits (600 s is only
  // a bound should the shell die), so it covers the whole measurement however long rtpulse
  // takes to start: under TSan, libtraceevent's kallsyms load alone takes over a minute.
  const std::string sender =
      "import os, socket, time\n"
      "os.sched_setaffinity(0, {" +
      ExplainCpu() +
      "})\n"
      "r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind(('127.0.0.1', 0))\n"
      "r.setblocking(False)\n"
      "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
      "a = r.getsockname(); b = b'x' * 1400; end = time.time() + 600\n"
      "while time.time() < end:\n"
      "  for _ in range(64): s.sendto(b, a)\n"
      "  try:\n"
      "    while True: r.recv(2048)\n"
      "  except BlockingIOError: pass\n";
  const std::string script = dir.File("udp_sender.py");
  std::ofstream(script) << sender;
  // The threshold is not a guess at this host's latencies: a 2 s run under the same flood,
  // traced the same way (its own threshold too high to explain anything), measures them
  // first, and the explained run takes its p99 rounded up to whole us, so about one wake in
  // a hundred is a spike however fast or noisy the host is. With a fixed 60 us a quiet host
  // gave one spike in 5 s, and that one fell outside the softirq. (p90 gave the explainer
  // more spikes than it keeps up with under this flood: windows trimmed before explained.)
  const std::string marker = "RTPULSE_EXPLAIN_TEST=" + std::to_string(getpid());
  const std::string rtpulse = std::string(RTPULSE_BINARY) + " latency -a " + ExplainCpu() +
                              " -t 1 -p 80 -i 1000 -q --explain-cost 0 ";
  const std::string p99 =
      "python3 -c \"import json, math; s = json.load(open('" + dir.File("cal.json") +
      "'))['thread']['0']['stats']; print(max(1, math.ceil(s['p99_ns'] / 1000)))\"";
  std::vector<std::string> shell = {
      "/bin/sh", "-c",
      "python3 " + script + " & p=$!; sleep 1; " + rtpulse + "-D 2s --explain 100000 --json " +
          dir.File("cal.json") + " && th=$(" + p99 + ") && echo $th > " + dir.File("th") + " && " +
          rtpulse + "-D 5s --explain $th --explain-windows " + dir.File("win") + " --json " +
          dir.File("n.json") + "; rc=$?; kill $p; wait; exit $rc"};
  ProcessOptions options;
  options.extra_env = {marker};
  // Up to three calibrated runs: one whose explained run saw no wake-up above the calibration
  // run's p99 (CI saw 0 of 5000 above 49 us once: the calibration's tail came from something
  // else, a host stall) tests nothing and is run again; any run with a spike is judged.
  nlohmann::json j;
  int64_t exited_ns = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto r = RunProcess(shell, options);
    exited_ns = MonotonicNowNs();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(testutil::MarkedProcesses(marker).empty());
    j = nlohmann::json::parse(ReadFile(dir.File("n.json")));
    if (j["rtpulse"]["explain"]["spikes_seen"].get<uint64_t>() > 0) break;
    std::printf("attempt %d: no wake-up above the calibrated threshold of %s us; again\n",
                attempt + 1, ReadFile(dir.File("th")).c_str());
  }
  const auto& x = j["rtpulse"]["explain"];
  ASSERT_TRUE(x["active"].get<bool>()) << x.dump();
  ExpectSpikesAddUp(x, exited_ns);
  const auto names_net_rx = [](const nlohmann::json& spike) {
    return std::any_of(spike["parts"].begin(), spike["parts"].end(), [](const auto& p) {
      return p["kind"] == "softirq" &&
             p["name"].template get<std::string>().rfind("NET_RX", 0) == 0;
    });
  };
  const auto net_rx =
      static_cast<size_t>(std::count_if(x["spikes"].begin(), x["spikes"].end(), names_net_rx));
  std::string threshold_us = ReadFile(dir.File("th"));
  threshold_us.erase(threshold_us.find_last_not_of('\n') + 1);
  RecordProperty("threshold_us", threshold_us);
  RecordProperty("net_rx_spikes", static_cast<int>(net_rx));
  RecordProperty("spikes_explained", static_cast<int>(x["spikes_explained"].get<uint64_t>()));
#if defined(__SANITIZE_THREAD__)
  // Under TSan the trace reader runs about 10x slower (7 s of CPU for a 5 s run here) and the
  // flood makes about 1.5 M events/s: the kernel overruns the ring and most windows are
  // incomplete, so no spike may name NET_RX. What must hold then is that the run says so
  // (the uninstrumented main suite asserts the attribution itself).
  if (net_rx == 0 && x["trace"]["events_lost"].get<uint64_t>() > 0) {
    EXPECT_NE(x["notes"].dump().find("ring buffer overrun"), std::string::npos) << x.dump(1);
    GTEST_SKIP() << "TSan: the trace reader fell behind the loopback flood ("
                 << x["trace"]["events_lost"] << " events lost, said in the notes)";
  }
#endif
  // Whatever the kernel made of the load, every softirq (and every other) part must be what
  // the raw window shows: the first 20 windows naming NET_RX and the first 20 others (a
  // noisy host can give hundreds of spikes, and each comparison is a python3 run).
  nlohmann::json checked = {{"spikes", nlohmann::json::array()}};
  size_t with_net_rx = 0;
  size_t without = 0;
  for (const auto& s : x["spikes"]) {
    if ((names_net_rx(s) ? with_net_rx : without)++ < 20) checked["spikes"].push_back(s);
  }
  EXPECT_GT(ExpectWindowsMatchTruth(checked, dir.path()), 0u) << x.dump(1);
  EXPECT_GT(net_rx, 0u) << "no spike names NET_RX under a loopback flood at the p99 threshold "
                        << threshold_us << " us: " << x.dump(1);
}

TEST_F(LatencyExplainTest, NoTracefsWarnsAndMeasuresWithoutAttribution) {
  TempDir dir;
  const std::vector<std::string> base = {"latency", "-a",   ExplainCpu(), "-t", "1",
                                         "-i",      "1000", "-D",         "1s", "-q"};
  std::vector<std::string> with = base;
  for (const char* a : {"--explain", "100", "--json", "-"}) with.emplace_back(a);
  ProcessOptions options;
  options.extra_env = {"RTPULSE_TRACEFS=/nonexistent"};
  auto r = RunRtpulse(with, options);
  auto plain = RunRtpulse(base);
  EXPECT_EQ(r.exit_code, plain.exit_code) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("rtpulse: warning: --explain: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; the run goes on without attribution"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& x = j["rtpulse"]["explain"];
  EXPECT_FALSE(x["active"].get<bool>());
  EXPECT_NE(x["unavailable_reason"].get<std::string>().find("/nonexistent"), std::string::npos)
      << x.dump();
  EXPECT_TRUE(x["spikes"].empty());
  EXPECT_GT(j["thread"]["0"]["cycles"].get<uint64_t>(), 500u);
}

TEST_F(LatencyExplainTest, NotRootWarnsAndMeasuresWithoutAttribution) {
  ProcessOptions options;
  options.run_as_uid = 65534;  // nobody: tracefs is mode 0700
  const std::vector<std::string> base = {
      "latency", "-a", ExplainCpu(),      "-t", "1", "-i", "1000", "-D", "1s", "-q",
      "--json",  "-",  "--allow-degraded"};
  std::vector<std::string> with = base;
  with.emplace_back("--explain");
  with.emplace_back("100");
  auto r = RunRtpulse(with, options);
  auto plain = RunRtpulse(base, options);
  EXPECT_EQ(r.exit_code, plain.exit_code) << r.err;
  EXPECT_NE(r.err.find("rtpulse: warning: --explain: "), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& x = j["rtpulse"]["explain"];
  EXPECT_FALSE(x["active"].get<bool>());
  EXPECT_FALSE(x["unavailable_reason"].get<std::string>().empty());
  EXPECT_GT(j["thread"]["0"]["cycles"].get<uint64_t>(), 500u);
  EXPECT_TRUE(RtpulseInstances().empty());
}

// Where nobody mounted tracefs, --explain as root mounts it, says so, and unmounts it at exit:
// run in a mount namespace of its own (unshare) with every tracefs there unmounted, so the
// machine's own mount (and the tests beside) are untouched.
TEST_F(LatencyExplainTest, AnUnmountedTracefsIsMountedForTheRunSaidAndUnmountedAfter) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "mounting tracefs needs root";
  if (std::system("command -v unshare >/dev/null") != 0) GTEST_SKIP() << "no unshare(1)";
  TempDir dir;
  const std::string script =
      "umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null; "
      "if grep -q ' tracefs ' /proc/self/mounts; then echo still-mounted; exit 97; fi; "
      "\"$0\" latency -a " +
      ExplainCpu() +
      " -t 1 -i 1000 -D 1s -q --explain 100 --json \"$1\"; "
      "rc=$?; echo tracefs-after=$(grep -c ' tracefs ' /proc/self/mounts); exit $rc";
  const auto r = RunProcess({"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh",
                             "-c", script, RTPULSE_BINARY, dir.File("s.json")});
  ASSERT_NE(r.exit_code, 97) << "tracefs could not be unmounted in the namespace: " << r.out;
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("tracefs-after=0"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(ReadFile(dir.File("s.json")));
  const auto& x = j["rtpulse"]["explain"];
  EXPECT_TRUE(x["active"].get<bool>()) << x.dump();
  EXPECT_NE(x.dump().find("tracefs was not mounted: rtpulse mounted it at /sys/kernel/tracing "
                          "for this run and unmounts it when it exits"),
            std::string::npos)
      << x.dump();
  // The machine's own tracefs is where it was.
  EXPECT_TRUE(testutil::TracefsUnavailable().empty());
  EXPECT_TRUE(RtpulseInstances().empty());
}

TEST_F(LatencyExplainTest, SigintMidRunLeavesNoInstanceAndValidJson) {
  TempDir dir;
  const std::string marker = "RTPULSE_EXPLAIN_SIGINT=" + std::to_string(getpid());
  ProcessOptions options;
  options.signal = SIGINT;
  options.signal_after = std::chrono::milliseconds(3000);
  options.extra_env = {marker};
  auto r = RunRtpulse(
      {"latency", "-a", ExplainCpu(), "-t", "1", "-i", "1000", "-D", "60s", "-q", "--inject",
       "300us@20Hz", "--explain", "150", "--explain-cost", "1s", "--json", dir.File("s.json")},
      options);
  EXPECT_EQ(r.exit_code, 0) << r.err;  // latency exits 0 when stopped, as cyclictest
  const auto j = nlohmann::json::parse(ReadFile(dir.File("s.json")));
  EXPECT_TRUE(j["rtpulse"]["interrupted"].get<bool>());
  const auto& x = j["rtpulse"]["explain"];
  EXPECT_TRUE(x["active"].get<bool>()) << x.dump();
  EXPECT_EQ(x["spikes_seen"].get<uint64_t>(),
            x["spikes_explained"].get<uint64_t>() + x["spikes_not_explained"].get<uint64_t>());
  EXPECT_TRUE(RtpulseInstances().empty());
  EXPECT_TRUE(testutil::MarkedProcesses(marker).empty());
}

struct ExplainBadInput {
  std::vector<std::string> args;
  std::string must_mention;
};

TEST(LatencyExplainBadInputTest, OneLineNamingTheValueExitTwo) {
  TempDir dir;
  std::ofstream(dir.File("a-file")) << "x";
  const std::vector<ExplainBadInput> cases = {
      {{"--explain", "abc"}, "'abc'"},
      {{"--explain=-5"}, "'-5'"},
      {{"--explain", "0"}, "above 0"},
      {{"--explain", "10parsecs"}, "'10parsecs'"},
      {{"--explain-windows", dir.File("w")}, "needs --explain"},
      {{"--explain-cost", "1s"}, "needs --explain"},
      {{"--explain", "100", "--explain-windows", dir.File("a-file")}, "is a file"},
      {{"--explain", "100", "--explain-windows", dir.File("no/such/w")}, "does not exist"},
      {{"--explain", "100", "--explain-cost=-1s"}, "'-1s'"},
      {{"--explain", "100", "--explain-cost", "soon"}, "'soon'"},
      {{"--explain", "100", "--explain-cost", "3s"}, "--explain-cost 3s"},
      {{"--explain-events", "full"}, "needs --explain"},
      {{"--explain", "100", "--explain-events", "medium"}, "'medium'"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"latency", "-t", "1", "-D", "1s", "-q"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = RunRtpulse(args);
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    EXPECT_EQ(r.exit_code, 2) << shown << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << shown << r.err;
    EXPECT_NE(r.err.find(c.must_mention), std::string::npos) << shown << r.err;
    EXPECT_TRUE(r.out.empty()) << shown << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("w")));
}

}  // namespace
}  // namespace rtpulse
