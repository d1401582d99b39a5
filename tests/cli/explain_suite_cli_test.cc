// suite --explain and control --explain end to end on the real tracefs: a SCHED_FIFO hog
// this test starts above the probes (the control job) spins known stretches on the measured
// CPU; result.json's explain must hold spikes whose parts add up to their lateness, the hog
// named with a share its own clock readings bound, the raw windows in <scenario>/explain/,
// and `report` must show the same numbers (HTML parsed back, text file). Without tracefs
// (RTPULSE_TRACEFS=/nonexistent) the run goes on and every output says why.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/explain_window_support.h"
#include "support/subprocess.h"
#include "support/tracefs.h"

namespace rtpulse {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testutil::ProcessOptions;
using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::SyscallPids;
using testutil::TempDir;

int64_t ExplainCliNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

/// One spin of the hog: [from, to] by its own CLOCK_MONOTONIC readings (to taken after its
/// record is written), and `outside_ns`, its CPU time (the kernel's count, CLOCK_THREAD_CPUTIME_ID)
/// since the previous spin's end that is not in [from, to]: waking from clock_nanosleep,
/// returning to user space and going back to sleep. A host stall there is on the CPU clock too
/// (this VM has no steal accounting), so the trace rightly charges it to the hog.
struct HogSpin {
  int64_t from = 0;
  int64_t to = 0;
  int64_t outside_ns = 0;
};

int ExplainCliCpu() {
  const unsigned n = std::thread::hardware_concurrency();
  return n > 1 ? static_cast<int>(n) - 1 : 0;
}

/// A SCHED_FIFO 60 thread pinned to `cpu`, spinning `spin_ns` every `every_ns` until
/// stopped; it keeps a HogSpin of each spin.
class ExplainCliHog {
 public:
  ExplainCliHog(int cpu, int64_t spin_ns, int64_t every_ns) {
    thread_ = std::thread([this, cpu, spin_ns, every_ns] {
      pthread_setname_np(pthread_self(), "rtpx-hog");
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(static_cast<size_t>(cpu), &set);
      sched_param sp{};
      sp.sched_priority = 60;
      fifo_ = sched_setaffinity(0, sizeof(set), &set) == 0 &&
              sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
      tid_ = static_cast<int>(syscall(SYS_gettid));
      {
        // The record of the spins is allocated and touched now: the thread's first malloc
        // (a new arena) and its first page faults cost this VM over 100 us on a freshly booted
        // machine, which the first spin's record then spent on the CPU outside its spin.
        std::lock_guard<std::mutex> lock(mutex_);
        spins_.resize(kMaxSpins);
        spins_.clear();
      }
      int64_t next = ExplainCliNowNs() + every_ns;
      int64_t cpu_before = ThreadCpuNs();
      while (!stop_.load()) {
        const timespec at{static_cast<time_t>(next / 1'000'000'000),
                          static_cast<long>(next % 1'000'000'000)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
        const int64_t from = ExplainCliNowNs();
        while (ExplainCliNowNs() - from < spin_ns) {
        }
        {
          // The spin ends after its own record: the bookkeeping is the hog's time on the CPU
          // too, up to the clock_nanosleep below.
          std::lock_guard<std::mutex> lock(mutex_);
          if (spins_.size() < kMaxSpins) {
            spins_.push_back({from, 0, 0});
            spins_.back().to = ExplainCliNowNs();
            const int64_t cpu_now = ThreadCpuNs();
            spins_.back().outside_ns =
                std::max<int64_t>(0, cpu_now - cpu_before - (spins_.back().to - from));
            cpu_before = cpu_now;
          }
        }
        next += every_ns;
      }
    });
  }
  ~ExplainCliHog() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  bool fifo() const { return fifo_.load(); }
  int tid() const { return tid_.load(); }
  std::vector<HogSpin> spins() {
    std::lock_guard<std::mutex> lock(mutex_);
    return spins_;
  }

 private:
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> fifo_{false};
  std::atomic<int> tid_{0};
  std::mutex mutex_;
  static constexpr size_t kMaxSpins = 4096;  // 20 min of spins at 301 ms
  std::vector<HogSpin> spins_;
};

/// The hog's period: not a multiple of the probes' 1 ms or the control job's 4 ms, so its
/// spins drift across their release grid (at 300 ms every spin would fall at the same phase
/// of the 4 ms grid, and a quarter of the runs between two releases: no job ever late).
constexpr int64_t kExplainCliHogEveryNs = 301'000'000;

class ExplainSuiteCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = testutil::TracefsUnavailable(); !why.empty()) GTEST_SKIP() << why;
  }
};

/// The checks every explain object passes whatever the machine did: counts add up, each
/// spike's parts add up to its lateness (recomputed here), the lateness exceeds the
/// threshold, the window file exists and is ftrace text.
void ExpectExplainHolds(const json& e, const std::string& run_dir) {
  ASSERT_TRUE(e.is_object());
  EXPECT_TRUE(e["active"].get<bool>()) << e["unavailable_reason"];
  EXPECT_EQ(e["spikes_explained"].get<uint64_t>() + e["spikes_not_explained"].get<uint64_t>(),
            e["spikes_seen"].get<uint64_t>());
  EXPECT_EQ(e["spikes"].size(), e["spikes_explained"].get<uint64_t>());
  const int64_t threshold = e["threshold_ns"];
  for (const auto& s : e["spikes"]) {
    int64_t sum = 0;
    for (const auto& p : s["parts"]) sum += p["ns"].get<int64_t>();
    EXPECT_EQ(sum, s["latency_ns"].get<int64_t>()) << s.dump();
    EXPECT_GT(s["latency_ns"].get<int64_t>(), threshold);
    const std::string file = s["window_file"];
    ASSERT_FALSE(file.empty()) << s.dump();
    EXPECT_EQ(file.front() == '/', false) << "relative to the results folder: " << file;
    const std::string text = ReadFile(run_dir + "/" + file);
    EXPECT_NE(text.find("sched_switch"), std::string::npos) << file;
  }
  // The cause table is the spikes' parts summed (an independent sum here).
  for (const auto& c : e["causes_by_time"]) {
    int64_t total = 0, max = 0;
    uint64_t spikes = 0;
    for (const auto& s : e["spikes"]) {
      for (const auto& p : s["parts"]) {
        if (p["kind"] == c["kind"] && p["name"] == c["name"]) {
          total += p["ns"].get<int64_t>();
          max = std::max(max, p["ns"].get<int64_t>());
          ++spikes;
        }
      }
    }
    EXPECT_EQ(total, c["total_ns"].get<int64_t>()) << c.dump();
    EXPECT_EQ(spikes, c["spikes"].get<uint64_t>()) << c.dump();
    EXPECT_EQ(max, c["max_ns"].get<int64_t>()) << c.dump();
  }
}

/// At least one spike names the hog, with a share no larger than the hog's spins inside the
/// spike's window (its own clock readings) plus 100 us plus the CPU time the kernel counted
/// for the hog outside its readings in those spins' cycles. The hog's clock also runs while the
/// host holds the vCPU, and a timer interrupt the host delays arrives late with the hog still
/// running: the trace rightly calls the time before it unaccounted. So each spike's hog share
/// plus its unaccounted time covers at least half the overlap, and at least one spike (most,
/// when the host keeps still) has the hog's share alone cover it.
void ExpectTheHogIsNamed(const json& e, int hog_tid, const std::vector<HogSpin>& spins) {
  const std::string hog_name = "rtpx-hog " + std::to_string(hog_tid) + " ";
  int named = 0;
  int covered_by_the_hog = 0;
  for (const auto& s : e["spikes"]) {
    const int64_t from = s["expected_ns"], to = from + s["latency_ns"].get<int64_t>();
    int64_t overlap = 0;
    int64_t outside = 0;    // the hog's CPU time around the spins near the window
    std::set<size_t> near;  // Spins whose outside_ns may fall in the window.
    for (size_t i = 0; i < spins.size(); ++i) {
      const HogSpin& spin = spins[i];
      overlap += std::max<int64_t>(0, std::min(spin.to, to) - std::max(spin.from, from));
      if (spin.from - 1'000'000 < to && spin.to > from) {
        near.insert(i);
        // The next spin's outside_ns holds this one's tail: its record, and going back to
        // sleep after `to`, which the window can hold (ci52: a 1.3 ms host stall there).
        if (i + 1 < spins.size()) near.insert(i + 1);
      }
    }
    for (const size_t i : near) outside += spins[i].outside_ns;
    int64_t unaccounted = 0;
    for (const auto& p : s["parts"]) {
      if (p["kind"] == "unaccounted") unaccounted += p["ns"].get<int64_t>();
    }
    for (const auto& p : s["parts"]) {
      if (p["kind"] != "thread" || p["name"].get<std::string>().rfind(hog_name, 0) != 0) continue;
      ++named;
      const int64_t hog_ns = p["ns"].get<int64_t>();
      EXPECT_LE(hog_ns, overlap + 100'000 + outside)
          << "outside its readings " << outside << " ns\n"
          << s.dump();
      EXPECT_GE(hog_ns + unaccounted, overlap / 2) << s.dump();
      if (hog_ns >= overlap / 2) ++covered_by_the_hog;
    }
  }
  EXPECT_GT(named, 0) << "no spike names the hog " << hog_name << ": "
                      << e["causes_by_time"].dump();
  EXPECT_GT(covered_by_the_hog, 0) << "no spike gives the hog half its overlap: " << e.dump();
}

/// `report` on the folder: the "why late" HTML tables and the text file carry result.json's
/// numbers.
void ExpectReportShows(const std::string& run_dir, const std::string& scenario, const json& e) {
  auto report = RunRtpulse({"report", run_dir, "--formats", "svg"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string html = ReadFile(run_dir + "/report/index.html");
  const std::string id = "why-late-" + scenario + "-by-time";
  const size_t at = html.find("<table id=\"" + id + "\">");
  ASSERT_NE(at, std::string::npos) << id;
  const std::string table = html.substr(at, html.find("</table>", at) - at);
  const std::regex row_re(
      "<tr class=\"cause\"><td>([^<]*)</td><td>([^<]*)</td><td class=\"num\" "
      "data-ns=\"([0-9]+)\">[^<]*</td><td class=\"num\">([0-9]+)</td>");
  std::vector<std::smatch> rows;
  for (auto m = std::sregex_iterator(table.begin(), table.end(), row_re);
       m != std::sregex_iterator(); ++m) {
    rows.push_back(*m);
  }
  ASSERT_EQ(rows.size(), e["causes_by_time"].size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][1].str(), e["causes_by_time"][i]["kind"]);
    EXPECT_EQ(std::stoll(rows[i][3]), e["causes_by_time"][i]["total_ns"].get<int64_t>());
    EXPECT_EQ(std::stoull(rows[i][4]), e["causes_by_time"][i]["spikes"].get<uint64_t>());
  }
  // The worst spike's window is linked from the page.
  if (!e["spikes"].empty()) {
    const auto worst =
        std::max_element(e["spikes"].begin(), e["spikes"].end(), [](const json& a, const json& b) {
          return a["latency_ns"].get<int64_t>() < b["latency_ns"].get<int64_t>();
        });
    EXPECT_NE(html.find("href=\"../" + (*worst)["window_file"].get<std::string>() + "\""),
              std::string::npos);
  }
  const std::string text = ReadFile(run_dir + "/tables/why_late.txt");
  EXPECT_NE(text.find("Why was it late: " + scenario), std::string::npos) << text;
}

TEST_F(ExplainSuiteCliTest, SuiteExplainsTheHogsSpikesAndTheReportShowsThem) {
  const int cpu = ExplainCliCpu();
  TempDir dir;
  const std::string out = dir.File("run");
  ExplainCliHog hog(cpu, 3'000'000, kExplainCliHogEveryNs);
  auto run = RunRtpulse({"suite", "--scenarios", "idle", "-D", "3s", "--settle", "0s", "--cpus",
                         std::to_string(cpu), "-p", "50", "--explain", "1ms", "-o", out, "-q"});
  hog.Stop();
  ASSERT_TRUE(hog.fifo()) << "SCHED_FIFO refused";
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json result = json::parse(ReadFile(out + "/result.json"));
  const json& e = result["scenarios"][0]["latency"]["rtpulse"]["explain"];
  ExpectExplainHolds(e, out);
  EXPECT_EQ(e["threshold_ns"], 1'000'000);
  EXPECT_EQ(e["trace"]["event_set"], "lean") << "the default";
  ExpectTheHogIsNamed(e, hog.tid(), hog.spins());
  EXPECT_TRUE(fs::is_directory(out + "/idle/explain"));
  EXPECT_NE(run.out.find("explain: spikes above"), std::string::npos) << run.out;
  ExpectReportShows(out, "idle", e);
}

TEST_F(ExplainSuiteCliTest, ControlExplainsLateJobsWhileTheLoopRuns) {
  const int cpu = ExplainCliCpu();
  TempDir dir;
  const std::string out = dir.File("run");
  ExplainCliHog hog(cpu, 3'000'000, kExplainCliHogEveryNs);
  // 750 jobs of 4 ms: 3 s.
  auto run = RunRtpulse({"control", "--policy", "fifo:50", "--jobs", "750", "--cpu",
                         std::to_string(cpu), "--no-stress", "--explain", "1000", "-o", out});
  hog.Stop();
  ASSERT_TRUE(hog.fifo()) << "SCHED_FIFO refused";
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json result = json::parse(ReadFile(out + "/result.json"));
  ASSERT_EQ(result["scenarios"].size(), 1u);
  const std::string scenario = result["scenarios"][0]["name"];
  const json& e = result["scenarios"][0]["latency"]["rtpulse"]["explain"];
  ExpectExplainHolds(e, out);
  ExpectTheHogIsNamed(e, hog.tid(), hog.spins());
  // Spikes are the jobs of jobs.csv whose start - release exceeds 1 ms (recomputed here).
  const std::string jobs = ReadFile(out + "/" + scenario + "/jobs.csv");
  std::vector<uint64_t> late;
  const std::regex job_re(R"(\n([0-9]+),(-?[0-9]+),(-?[0-9]+),)");
  for (auto m = std::sregex_iterator(jobs.begin(), jobs.end(), job_re); m != std::sregex_iterator();
       ++m) {
    if (std::stoll((*m)[3]) - std::stoll((*m)[2]) > 1'000'000) late.push_back(std::stoull((*m)[1]));
  }
  EXPECT_EQ(e["spikes_seen"].get<uint64_t>(), late.size());
  for (const auto& s : e["spikes"]) {
    EXPECT_NE(std::find(late.begin(), late.end(), s["seq"].get<uint64_t>()), late.end())
        << "spike seq " << s["seq"] << " is not a late job of jobs.csv";
  }
  // The live verdict lines (without -q).
  EXPECT_NE(run.err.find("explain: T:0 cpu " + std::to_string(cpu)), std::string::npos) << run.err;
  ExpectReportShows(out, scenario, e);
}

// With the full event set the control loop's thread is the probe: its tid is published, the
// raw_syscalls filter is exactly it, every spike carries it, and the saved windows hold the
// syscalls of that thread and of no other task.
TEST_F(ExplainSuiteCliTest, ControlFullSetTracesTheLoopThreadsSyscalls) {
  const int cpu = ExplainCliCpu();
  TempDir dir;
  const std::string out = dir.File("run");
  ExplainCliHog hog(cpu, 3'000'000, kExplainCliHogEveryNs);
  auto run =
      RunRtpulse({"control", "--policy", "fifo:50", "--jobs", "500", "--cpu", std::to_string(cpu),
                  "--no-stress", "--explain", "1000", "--explain-events", "full", "-o", out, "-q"});
  hog.Stop();
  ASSERT_TRUE(hog.fifo()) << "SCHED_FIFO refused";
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json result = json::parse(ReadFile(out + "/result.json"));
  ASSERT_EQ(result["scenarios"].size(), 1u);
  const json& latency = result["scenarios"][0]["latency"];
  const json& e = latency["rtpulse"]["explain"];
  ExpectExplainHolds(e, out);
  ExpectTheHogIsNamed(e, hog.tid(), hog.spins());
  const int tid = latency["thread"]["0"]["tid"].get<int>();
  ASSERT_GT(tid, 0) << latency["thread"]["0"].dump();
  ASSERT_EQ(e["probe_tids"].size(), 1u) << e.dump();
  EXPECT_EQ(e["probe_tids"][0]["wake"], latency["thread"]["0"]["wake"]) << e["probe_tids"].dump();
  EXPECT_EQ(e["probe_tids"][0]["tids"], json::array({tid})) << e["probe_tids"].dump();
  EXPECT_EQ(e["trace"]["syscall_filter"]["applied"], true) << e["trace"].dump();
  EXPECT_EQ(e["trace"]["syscall_filter"]["filter"], "common_pid == " + std::to_string(tid));
  ASSERT_FALSE(e["spikes"].empty()) << e.dump();
  size_t own = 0;
  for (const auto& s : e["spikes"]) {
    EXPECT_EQ(s["probe_tid"].get<int>(), tid) << s.dump();
    const std::string file = s["window_file"].get<std::string>();
    if (file.empty()) continue;
    for (int pid : SyscallPids(ReadFile(file[0] == '/' ? file : out + "/" + file))) {
      EXPECT_EQ(pid, tid) << "a syscall of another task in " << file;
      ++own;
    }
  }
  EXPECT_GT(own, 0u) << "no syscall of the loop thread in any saved window";
}

TEST_F(ExplainSuiteCliTest, WithoutTracefsTheRunGoesOnAndSaysWhy) {
  TempDir dir;
  const std::string out = dir.File("run");
  ProcessOptions options;
  options.extra_env = {"RTPULSE_TRACEFS=/nonexistent"};
  auto run = RunRtpulse({"suite", "--scenarios", "idle", "-D", "1s", "--settle", "0s", "--cpus",
                         std::to_string(ExplainCliCpu()), "--explain", "200us", "-o", out, "-q"},
                        options);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json result = json::parse(ReadFile(out + "/result.json"));
  const json& scenario = result["scenarios"][0];
  const json& e = scenario["latency"]["rtpulse"]["explain"];
  ASSERT_TRUE(e.is_object());
  EXPECT_FALSE(e["active"].get<bool>());
  const std::string reason = e["unavailable_reason"];
  EXPECT_NE(reason.find("/nonexistent"), std::string::npos) << reason;
  EXPECT_TRUE(e["spikes"].empty());
  EXPECT_EQ(e["spikes_not_explained"], e["spikes_seen"]);
  const std::string warnings = scenario["warnings"].dump();
  EXPECT_NE(warnings.find("--explain: "), std::string::npos) << warnings;
  EXPECT_GT(scenario["latency"]["thread"]["0"]["cycles"].get<uint64_t>(), 0u) << "measured anyway";

  auto report = RunRtpulse({"report", out, "--formats", "svg"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string html = ReadFile(out + "/report/index.html");
  EXPECT_NE(html.find("The kernel trace did not run: "), std::string::npos);
  EXPECT_NE(html.find("/nonexistent"), std::string::npos);
  EXPECT_NE(ReadFile(out + "/tables/why_late.txt").find("the kernel trace did not run"),
            std::string::npos);
}

TEST(ExplainSuiteCliUsageTest, BadThresholdsAreUsageErrorsNamingTheValue) {
  TempDir dir;
  for (const auto& [command, value] : std::vector<std::pair<std::string, std::string>>{
           {"suite", "abc"}, {"suite", "0"}, {"control", "-5us"}, {"control", "x"}}) {
    auto run = RunRtpulse({command, "--explain", value, "-o", dir.File(command + value)});
    EXPECT_EQ(run.exit_code, 2) << command << " " << value << ": " << run.err;
    EXPECT_NE(run.err.find("--explain '" + value + "'"), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(dir.File(command + value))) << "nothing written";
  }
  auto run = RunRtpulse({"control", "--interference", "--explain", "200", "-o", dir.File("i")});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("drop --explain"), std::string::npos) << run.err;
}

TEST(ExplainSuiteCliUsageTest, BadEventSetsAreUsageErrorsNamingTheValue) {
  TempDir dir;
  for (const std::string command : {"suite", "control"}) {
    auto bad = RunRtpulse(
        {command, "--explain", "200", "--explain-events", "most", "-o", dir.File(command + "1")});
    EXPECT_EQ(bad.exit_code, 2) << command << ": " << bad.err;
    EXPECT_NE(bad.err.find("--explain-events 'most'"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("lean"), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(dir.File(command + "1"))) << "nothing written";
    auto alone = RunRtpulse({command, "--explain-events", "full", "-o", dir.File(command + "2")});
    EXPECT_EQ(alone.exit_code, 2) << command << ": " << alone.err;
    EXPECT_NE(alone.err.find("needs --explain"), std::string::npos) << alone.err;
    EXPECT_FALSE(fs::exists(dir.File(command + "2"))) << "nothing written";
  }
}

}  // namespace
}  // namespace rtpulse
