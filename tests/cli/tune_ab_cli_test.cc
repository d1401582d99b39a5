// rtpulse suite --tune-ab end to end: the real binary, real SCHED_FIFO probes, the real
// /proc/irq and sched_rt_runtime_us switched off and on by block. The effects are checked
// against tests/data/tune_ab/check_tune_ab.py, which recomputes them from result.json and
// statistical_summary.json; latency magnitudes are never asserted (the VM steals time).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testutil::ProcessOptions;
using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::TempDir;

/// Every file the knobs of this machine may write, and its content.
std::map<std::string, std::string> TunedFiles() {
  std::map<std::string, std::string> files;
  files["/proc/sys/kernel/sched_rt_runtime_us"] = ReadFile("/proc/sys/kernel/sched_rt_runtime_us");
  files["/proc/irq/default_smp_affinity"] = ReadFile("/proc/irq/default_smp_affinity");
  for (const auto& entry : fs::directory_iterator("/proc/irq")) {
    const std::string list = entry.path().string() + "/smp_affinity_list";
    if (fs::exists(list)) files[list] = ReadFile(list);
  }
  return files;
}

std::string CheckWithPython(const std::string& run, const std::string& out) {
  TempDir tmp;
  const std::string printed = tmp.File("stdout.txt");
  std::ofstream(printed) << out;
  const auto r = testutil::RunProcess({"/usr/bin/python3",
                                       std::string(RTPULSE_TEST_DATA) + "/tune_ab/check_tune_ab.py",
                                       run, printed});
  return r.out + r.err;
}

const json* Knob(const json& result, const std::string& name) {
  for (const auto& k : result["tune_ab"]["knobs"]) {
    if (k["knob"] == name) return &k;
  }
  return nullptr;
}

/// Two CPUs at least: CPU 1 is measured, CPU 0 keeps the IRQs.
class TuneAbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for SCHED_FIFO and the tunings";
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs (one for the IRQs)";
    if (ReadFile("/proc/sys/kernel/sched_rt_runtime_us") == "-1\n") {
      GTEST_SKIP() << "RT throttling already off: nothing to switch";
    }
  }
  std::vector<std::string> Args(const std::string& out, const std::string& pairs,
                                const std::string& duration) {
    return {"suite",      "--tune-ab", "--no-rt-throttling",
            "--ab-pairs", pairs,       "--scenarios",
            "idle",       "--cpus",    "1",
            "--duration", duration,    "--settle",
            "0",          "-q",        "--out",
            out};
  }
};

TEST_F(TuneAbTest, EachKnobRunsOffAndOnInterleavedAndItsEffectIsRecomputed) {
  const auto before = TunedFiles();
  TempDir dir;
  const std::string run = dir.File("run");
  const auto r = RunRtpulse(Args(run, "6", "150ms"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(TunedFiles(), before) << "every knob restored at the end";
  const json result = json::parse(ReadFile(run + "/result.json"));
  ASSERT_TRUE(result["tune_ab"].is_object());

  const json* rt = Knob(result, "rt-throttling");
  ASSERT_NE(rt, nullptr);
  ASSERT_TRUE((*rt)["applies"].get<bool>()) << (*rt)["detail"];
  ASSERT_EQ((*rt)["blocks"].size(), 12u);
  for (const auto& b : (*rt)["blocks"]) {
    EXPECT_TRUE(b["measured"].get<bool>()) << b.dump();
    if (b["condition"] == "on") {
      ASSERT_EQ(b["tuning"].size(), 1u);
      EXPECT_EQ(b["tuning"][0]["after"], "-1");
      EXPECT_TRUE(b["tuning"][0]["restored"].get<bool>());
    }
  }
  for (const auto& e : (*rt)["effects"]) EXPECT_TRUE(e["measurable"].get<bool>()) << e.dump();
  // No cpufreq on a VM: listed with the reason, never measured.
  for (const char* name : {"governor", "min-freq"}) {
    const json* k = Knob(result, name);
    ASSERT_NE(k, nullptr);
    if (fs::exists("/sys/devices/system/cpu/cpu0/cpufreq")) continue;
    EXPECT_FALSE((*k)["applies"].get<bool>());
    EXPECT_NE((*k)["detail"].get<std::string>().find("no cpufreq"), std::string::npos);
    EXPECT_FALSE(k->contains("effects"));
  }
  EXPECT_EQ(CheckWithPython(run, r.out), "ok\n");
  EXPECT_EQ(ReadFile(run + "/tune_ab.txt"),
            r.out.substr(r.out.find("Tuning A/B"), ReadFile(run + "/tune_ab.txt").size()));
}

TEST_F(TuneAbTest, FewerThanSixPairsPrintNoNumber) {
  TempDir dir;
  const std::string run = dir.File("run");
  const auto r = RunRtpulse(Args(run, "2", "100ms"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json result = json::parse(ReadFile(run + "/result.json"));
  const json* rt = Knob(result, "rt-throttling");
  ASSERT_NE(rt, nullptr);
  for (const auto& e : (*rt)["effects"]) {
    EXPECT_FALSE(e["measurable"].get<bool>());
    EXPECT_EQ(e["note"], "not measurable: fewer than 6 complete pairs (2)");
    EXPECT_TRUE(e["median_difference_ns"].is_null());
  }
  EXPECT_NE(r.out.find("idle p99.9  not measurable: fewer than 6 complete pairs (2)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(CheckWithPython(run, r.out), "ok\n");
}

TEST_F(TuneAbTest, SigtermMidRunRestoresEveryKnob) {
  const auto before = TunedFiles();
  TempDir dir;
  const std::string run = dir.File("run");
  ProcessOptions options;
  options.signal = SIGTERM;
  options.signal_after = std::chrono::milliseconds(2000);
  const auto r = RunRtpulse(Args(run, "6", "300ms"), options);
  ASSERT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(TunedFiles(), before) << "restored on SIGTERM";
  const json result = json::parse(ReadFile(run + "/result.json"));
  EXPECT_EQ(result["status"], "interrupted");
  size_t ran = 0;
  for (const auto& k : result["tune_ab"]["knobs"]) {
    if (!k["applies"].get<bool>()) continue;
    for (const auto& b : k["blocks"]) {
      if (b["status"] != "pending") ++ran;
      if (b["condition"] == "on" && b["status"] != "pending") {
        for (const auto& c : b["tuning"]) {
          if (c["status"] == "applied") {
            EXPECT_TRUE(c["restored"].get<bool>()) << c.dump();
          }
        }
      }
    }
  }
  EXPECT_GT(ran, 0u);
  EXPECT_EQ(CheckWithPython(run, r.out), "ok\n");
}

TEST_F(TuneAbTest, NoKnobThatAppliesIsAResourceErrorNamingEachReason) {
  // As nobody every /proc write is refused: nothing can be compared, nothing is run.
  const std::string out = "/tmp/rtpulse-tune-ab-nobody-" + std::to_string(getpid());
  ProcessOptions options;
  options.run_as_uid = 65534;
  const auto r = RunRtpulse(Args(out, "6", "100ms"), options);
  fs::remove_all(out);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("--tune-ab: no tuning applies on this machine"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rt-throttling: does not apply here: RT throttling refused: Permission "
                       "denied"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("irq-affinity: does not apply here:"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one error line: " << r.err;
}

TEST(TuneAbUsageTest, BadCombinationsAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--tune", "--tune-ab"}, "--tune and --tune-ab exclude each other"},
      {{"--ab-pairs", "6"}, "--ab-pairs needs --tune-ab"},
      {{"--tune-ab", "--ab-pairs", "0"}, "--ab-pairs 0 must be between 1 and 1000"},
      {{"--tune-ab", "--wake", "abs,rel"}, "--tune-ab compares one wake path"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = {"suite", "--scenarios", "idle", "-D", "1s"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = RunRtpulse(args);
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace rtpulse
