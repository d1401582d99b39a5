// The sampler on the Raspberry Pi 5 fixture tree, with the fake vcgencmd run through the
// real SystemCommandRunner: values change between samples taken at exact, made-up times.

#include "monitor/sampler.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/command_runner.h"
#include "core/fs_root.h"
#include "monitor/monitor_test_util.h"
#include "monitor/sources.h"
#include "support/test_paths.h"

namespace rtpulse::monitor {
namespace {

constexpr int64_t kT0Realtime = 1'700'000'000'000'000'000;  // 2023-11-14T22:13:20Z
constexpr int64_t kT0 = 50 * kNsPerSec;
constexpr int64_t kStep = 100 * kNsPerMs;

/// Polls `done` until it holds or a generous deadline passes (the VM stalls for tens of ms):
/// the tests wait for what they need, never for a guessed time.
template <typename Condition>
bool WaitFor(Condition done, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

/// Threads of this process (/proc/self/task), to see the sampler's thread come and go.
/// This process's threads that run at SCHED_IDLE: in these tests, only the sampler's. (Not a
/// thread count: a sanitizer's runtime starts threads of its own beside the sampler.)
std::vector<pid_t> IdleThreads() {
  std::vector<pid_t> tids;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    const pid_t tid = std::stoi(task.path().filename().string());
    if (sched_getscheduler(tid) == SCHED_IDLE) tids.push_back(tid);
  }
  return tids;
}

/// Sum of the aggregate "cpu" line of /proc/stat, in jiffies; 0 when unreadable.
uint64_t CpuJiffies() {
  std::istringstream in(testutil::ReadFile("/proc/stat"));
  std::string label;
  in >> label;
  uint64_t total = 0;
  for (uint64_t v = 0; label == "cpu" && in >> v;) total += v;
  return total;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class SamplerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Sampler> Open() {
    auto s = Sampler::Open(csv_, {kStep, {80, 85}}, DefaultSources(root_, runner_));
    EXPECT_TRUE(s) << s.error().message;
    return std::move(*s);
  }
  void RunFourSamples(Sampler& s);
  void Sample(Sampler& s, int k) {
    ASSERT_TRUE(s.SampleAt(kT0 + k * kStep, kT0Realtime + k * kStep));
  }

  testing::PiFixture pi_;
  FsRoot root_{pi_.root()};
  const SystemCommandRunner runner_{pi_.bin()};
  std::string csv_ = pi_.out() + "/thermal_power_log.csv";
};

constexpr const char* kHeader =
    "timestamp,elapsed_s,temp_zone0_cpu_thermal_c,cpu0_freq_mhz,cpu1_freq_mhz,cpu2_freq_mhz,"
    "cpu3_freq_mhz,throttled_raw,under_voltage_now,arm_freq_capped_now,throttled_now,"
    "soft_temp_limit_now,pmic_power_w,ext5v_v,core_v,policy0_capped,zone0_passive_trip,load1,"
    "load5,load15,cpu_busy_pct,cpu_steal_pct,cpu0_busy_pct,cpu1_busy_pct,cpu2_busy_pct,"
    "cpu3_busy_pct,ctxt_per_s,mem_used_mib,mem_available_mib,irq_cpu0_per_s,irq_cpu1_per_s,"
    "irq_cpu2_per_s,irq_cpu3_per_s,softirq_cpu0_per_s,softirq_cpu1_per_s,softirq_cpu2_per_s,"
    "softirq_cpu3_per_s,scenario";

/// Four samples 100 ms apart; the comments give what each one should log.
void SamplerTest::RunFourSamples(Sampler& s) {
  auto& pi = pi_;
  Sample(s, 0);  // 50 C, 1500 MHz, 0x0; rates and CPU use have no previous sample
  pi.Write("/sys/class/thermal/thermal_zone0/temp", "81000\n");
  pi.Write("/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", "2400000\n");
  pi.Stat(150, 940, 10, 1100);  // +50 user, +40 idle, +10 steal: 50 % busy, 10 % steal
  pi.Interrupts(910);           // cpu0 +10 in 100 ms
  pi.Softirqs(420);             // cpu1 +20 in 100 ms
  Sample(s, 1);                 // 0x50005
  pi.Write("/sys/class/thermal/thermal_zone0/temp", "86000\n");
  pi.Write("/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq", "1800000\n");
  pi.Stat(250, 940, 10, 1300);  // all busy; ctxt +200
  pi.WriteBin("pmic.txt",
              "     3V3_SYS_A current(1)=0.10000000A\n    VDD_CORE_A current(7)=2.00000000A\n"
              "     3V3_SYS_V volt(9)=3.30000000V\n    VDD_CORE_V volt(15)=0.80000000V\n"
              "       EXT5V_V volt(24)=5.10000000V\n        BATT_V volt(25)=nanV\n");
  Sample(s, 2);  // 0x50000
  pi.Write("/sys/class/thermal/thermal_zone0/temp", "79000\n");
  pi.Write("/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", "1500000\n");
  pi.Write("/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq", "2400000\n");
  pi.Stat(250, 1040, 10, 1300);  // all idle
  pi.WriteBin("pmic.txt",
              "     3V3_SYS_A current(1)=0.10000000A\n    VDD_CORE_A current(7)=1.50000000A\n"
              "     3V3_SYS_V volt(9)=3.30000000V\n    VDD_CORE_V volt(15)=0.80000000V\n"
              "       EXT5V_V volt(24)=5.10000000V\n");
  Sample(s, 3);  // 0x50005 again
}

TEST_F(SamplerTest, EveryPi5SourceFoundWithoutNotes) {
  auto s = Open();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->notes().empty()) << s->notes().front();
  EXPECT_EQ(s->columns().size(), 35u);
  EXPECT_EQ(Lines(testutil::ReadFile(csv_)), std::vector<std::string>{kHeader});
}

TEST_F(SamplerTest, ExactRowsAsValuesChange) {
  auto s = Open();
  ASSERT_TRUE(s);
  RunFourSamples(*s);
  const auto lines = Lines(testutil::ReadFile(csv_));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], kHeader);
  EXPECT_EQ(lines[1],
            "2023-11-14T22:13:20.000Z,0.000,50,1500,1500,1500,1500,0x0,0,0,0,0,1.53,5.1,0.72,0,0,"
            "0.5,0.4,0.3,,,,,,,,4000,4000,,,,,,,,,");
  EXPECT_EQ(lines[2],
            "2023-11-14T22:13:20.100Z,0.100,81,2400,2400,2400,2400,0x50005,1,0,1,0,1.53,5.1,0.72,"
            "0,0,0.5,0.4,0.3,50,10,50,50,50,50,1000,4000,4000,100,0,0,0,0,200,0,0,");
  EXPECT_EQ(lines[3],
            "2023-11-14T22:13:20.200Z,0.200,86,2400,2400,2400,2400,0x50000,0,0,0,0,1.93,5.1,0.72,"
            "1,1,0.5,0.4,0.3,100,0,100,100,100,100,2000,4000,4000,0,0,0,0,0,0,0,0,");
  EXPECT_EQ(lines[4],
            "2023-11-14T22:13:20.300Z,0.300,79,1500,1500,1500,1500,0x50005,1,0,1,0,1.53,5.1,0.72,"
            "0,0,0.5,0.4,0.3,0,0,0,0,0,0,0,4000,4000,0,0,0,0,0,0,0,0,");
}

// The suite names the scenario running at each row; outside one the cell is empty, and a
// name that would break the CSV is written with '_'.
TEST_F(SamplerTest, ScenarioColumnFollowsSetScenario) {
  auto s = Open();
  ASSERT_TRUE(s);
  Sample(*s, 0);
  s->SetScenario("idle");
  Sample(*s, 1);
  s->SetScenario("cpu,\"x\"\nload");
  Sample(*s, 2);
  s->SetScenario("");
  Sample(*s, 3);
  const auto lines = Lines(testutil::ReadFile(csv_));
  ASSERT_EQ(lines.size(), 5u);
  const size_t columns = static_cast<size_t>(std::count(lines[0].begin(), lines[0].end(), ','));
  const std::vector<std::string> want = {"", "idle", "cpu__x__load", ""};
  for (size_t k = 0; k < want.size(); ++k) {
    const std::string& line = lines[k + 1];
    EXPECT_EQ(static_cast<size_t>(std::count(line.begin(), line.end(), ',')), columns) << line;
    EXPECT_EQ(line.substr(line.rfind(',') + 1), want[k]) << line;
  }
}

TEST_F(SamplerTest, ExactStatsGolden) {
  auto s = Open();
  ASSERT_TRUE(s);
  RunFourSamples(*s);
  const std::string stats = s->StatsText();
  const std::string golden_path = std::string(RTPULSE_TEST_DATA) + "/monitor/pi5_stats.golden.txt";
  // RTPULSE_UPDATE_GOLDEN=1 rewrites the golden file; review its diff before committing.
  if (std::getenv("RTPULSE_UPDATE_GOLDEN") != nullptr) std::ofstream(golden_path) << stats;
  const std::string golden = testutil::ReadFile(golden_path);
  EXPECT_EQ(stats, golden);
  ASSERT_TRUE(s->WriteStats(pi_.out() + "/power_thermal_stats.txt"));
  EXPECT_EQ(testutil::ReadFile(pi_.out() + "/power_thermal_stats.txt"), golden);
}

TEST_F(SamplerTest, MissingSourcesDropColumnsWithNotes) {
  std::filesystem::remove_all(pi_.root() + "/sys");
  std::filesystem::remove(pi_.root() + "/proc/softirqs");
  const SystemCommandRunner no_vcgencmd(pi_.out() + "/empty");
  auto s = Sampler::Open(csv_, {kStep, {80, 85}}, DefaultSources(root_, no_vcgencmd));
  ASSERT_TRUE(s) << s.error().message;
  const auto notes = (*s)->notes();
  ASSERT_EQ(notes.size(), 5u);
  EXPECT_EQ(notes[0].rfind("thermal: ", 0), 0u) << notes[0];
  EXPECT_EQ(notes[1].rfind("cpufreq: ", 0), 0u) << notes[1];
  EXPECT_EQ(notes[2].rfind("vcgencmd: not found on PATH", 0), 0u) << notes[2];
  EXPECT_EQ(notes[3].rfind("limits: ", 0), 0u) << notes[3];
  EXPECT_EQ(notes[4].rfind("softirq: /proc/softirqs not readable", 0), 0u) << notes[4];
  ASSERT_TRUE((*s)->SampleAt(kT0, kT0Realtime));
  const std::string stats = (*s)->StatsText();
  EXPECT_NE(stats.find("  no throttling source (see notes)\n"), std::string::npos) << stats;
  EXPECT_NE(stats.find("  no temperature source (see notes)\n"), std::string::npos) << stats;
  EXPECT_EQ(stats.find("pmic_power_w"), std::string::npos);
}

TEST_F(SamplerTest, FileVanishingMidRunLeavesEmptyCells) {
  auto s = Open();
  ASSERT_TRUE(s);
  Sample(*s, 0);
  std::filesystem::remove(pi_.root() + "/sys/class/thermal/thermal_zone0/temp");
  pi_.WriteBin("vcgencmd", "#!/bin/sh\nexit 1\n");
  Sample(*s, 1);
  const auto lines = Lines(testutil::ReadFile(csv_));
  ASSERT_EQ(lines.size(), 3u);
  const std::string expected =
      "2023-11-14T22:13:20.100Z,0.100,,1500,1500,1500,1500,,,,,,,,,0,,0.5,";
  EXPECT_EQ(lines[2].rfind(expected, 0), 0u) << lines[2];
}

TEST_F(SamplerTest, ZeroIntervalIsUsageError) {
  auto s = Sampler::Open(csv_, {0, {80}}, DefaultSources(root_, runner_));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
}

TEST_F(SamplerTest, UnwritableCsvIsUsageError) {
  auto s =
      Sampler::Open("/proc/no/such/dir/log.csv", {kStep, {80}}, DefaultSources(root_, runner_));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_NE(s.error().message.find("/proc/no/such/dir/log.csv"), std::string::npos);
}

TEST_F(SamplerTest, ThreadSamplesAtLowPriorityUntilStopped) {
  auto s = Open();
  ASSERT_TRUE(s);
  ASSERT_TRUE(IdleThreads().empty());
  s->Start();
  EXPECT_TRUE(WaitFor([&] { return s->rows() >= 3; })) << "rows: " << s->rows();
  EXPECT_EQ(IdleThreads().size(), 1u) << "one sampling thread, at SCHED_IDLE";
  ASSERT_TRUE(s->Stop());
  const uint64_t rows = s->rows();
  EXPECT_GE(rows, 3u);
  // No sleep to see whether more rows come: once the sampling thread has left the process
  // (a joined thread leaves /proc/self/task a moment after join returns), nothing can add any.
  EXPECT_TRUE(WaitFor([&] { return IdleThreads().empty(); }))
      << "the sampling thread outlived Stop()";
  EXPECT_EQ(s->rows(), rows) << "the thread kept sampling after Stop()";
  EXPECT_EQ(Lines(testutil::ReadFile(csv_)).size(), rows + 1);
  const auto notes = s->notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "sampler thread runs at SCHED_IDLE");
}

// This machine's real /proc and /sys: what is missing (thermal, cpufreq on this VM) becomes a
// note, never an error, and the /proc columns are there.
TEST(SamplerRealMachine, MissingSysfsIsNotesNotErrors) {
  testutil::TempDir dir;
  std::filesystem::create_directory(dir.File("empty"));
  const FsRoot real("");
  const SystemCommandRunner runner(dir.File("empty"));
  auto s = Sampler::Open(dir.File("log.csv"), {kStep, {80}}, DefaultSources(real, runner));
  ASSERT_TRUE(s) << s.error().message;
  const auto notes = (*s)->notes();
  const bool has_thermal = real.Exists("/sys/class/thermal/thermal_zone0/temp");
  const bool thermal_note = std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return n.rfind("thermal: ", 0) == 0;
  });
  EXPECT_EQ(thermal_note, !has_thermal);
  ASSERT_TRUE((*s)->SampleOnce());
  // The busy share needs /proc/stat to have moved on since the first sample: wait for that.
  const uint64_t jiffies = CpuJiffies();
  ASSERT_GT(jiffies, 0u);
  ASSERT_TRUE(WaitFor([&] { return CpuJiffies() > jiffies; }));
  ASSERT_TRUE((*s)->SampleOnce());
  const auto& cols = (*s)->columns();
  const auto busy = std::find_if(cols.begin(), cols.end(),
                                 [](const Column& c) { return c.name == "cpu_busy_pct"; });
  ASSERT_NE(busy, cols.end());
  const auto lines = Lines(testutil::ReadFile(dir.File("log.csv")));
  ASSERT_EQ(lines.size(), 3u);
  // Split the last row and check the CPU-use cell has a value between 0 and 100.
  std::vector<std::string> cells;
  std::stringstream row(lines[2]);
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
  const auto index = static_cast<size_t>(busy - cols.begin()) + 2;
  ASSERT_LT(index, cells.size());
  const double value = std::stod(cells[index]);
  EXPECT_GE(value, 0.0);
  EXPECT_LE(value, 100.0);
}

}  // namespace
}  // namespace rtpulse::monitor

namespace rtpulse::monitor {
namespace {

/// A source whose second sample blocks until released: a stand-in for a vcgencmd call that
/// hangs for its whole timeout.
class GateSource final : public Source {
 public:
  std::string_view name() const override { return "gate"; }
  std::vector<Column> Start(std::vector<std::string>& /*notes*/) override {
    return {{"gate_v", "V", ColumnKind::kGauge}};
  }
  void Sample(int64_t /*monotonic_ns*/, std::span<double> values) override {
    std::unique_lock<std::mutex> lock(mu);
    ++calls;
    entered.notify_all();
    if (calls == 2) released.wait(lock, [this] { return open; });
    values[0] = static_cast<double>(calls);
  }
  std::mutex mu;
  std::condition_variable entered;
  std::condition_variable released;
  int calls = 0;
  bool open = false;
};

TEST(SamplerLatestTest, NaNBeforeTheFirstSampleThenTheLastWholeOneEvenWhileASampleHangs) {
  auto gate = std::make_unique<GateSource>();
  GateSource* g = gate.get();
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::move(gate));
  auto sampler = Sampler::Open("", SamplerOptions{}, std::move(sources));  // no CSV
  ASSERT_TRUE(sampler) << sampler.error().message;
  ASSERT_EQ((*sampler)->Latest().size(), 1U);
  EXPECT_TRUE(std::isnan((*sampler)->Latest()[0]));
  ASSERT_TRUE((*sampler)->SampleAt(kT0, kT0Realtime));
  EXPECT_DOUBLE_EQ((*sampler)->Latest()[0], 1.0);
  // The second sample hangs inside the source; Latest() still answers, with the first.
  std::thread hanging([&] { (void)(*sampler)->SampleAt(kT0 + kStep, kT0Realtime + kStep); });
  {
    std::unique_lock<std::mutex> lock(g->mu);
    g->entered.wait(lock, [g] { return g->calls == 2; });
  }
  EXPECT_DOUBLE_EQ((*sampler)->Latest()[0], 1.0);
  {
    std::lock_guard<std::mutex> lock(g->mu);
    g->open = true;
  }
  g->released.notify_all();
  hanging.join();
  EXPECT_DOUBLE_EQ((*sampler)->Latest()[0], 2.0);
  EXPECT_EQ((*sampler)->rows(), 2U);
}

}  // namespace
}  // namespace rtpulse::monitor
