// Assertions on the serial console of the QEMU proof guest (tests/kernel/qemu-rt-boot, run by
// ctest as the fixture kernel_qemu_boot): a PREEMPT_RT kernel built by scripts/build-rt-kernel
// from Debian's linux-source-6.12, booted under TCG with isolcpus/nohz_full, checking itself
// with rtpulse from the inside.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "guest_console.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

using guest::Console;
using guest::GuestConsole;

std::string ManifestValue(const std::string& key) {
  std::ifstream in(std::string(RTPULSE_QEMU_DIR) + "/manifest.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}

class QemuGuestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Console().loaded)
        << "no " << RTPULSE_QEMU_DIR
        << "/console.log: run through ctest, whose fixture "
           "kernel_qemu_boot builds and boots the guest (ctest -R kernel_qemu)";
    ASSERT_EQ(Console().values.count("done"), 1u) << "the guest did not reach its end:\n"
                                                  << Console().raw;
  }
  static std::string Value(const std::string& key) {
    auto it = Console().values.find(key);
    return it == Console().values.end() ? "<absent>" : it->second;
  }
  static std::string Section(const std::string& key) {
    auto it = Console().sections.find(key);
    return it == Console().sections.end() ? "" : it->second;
  }
};

TEST_F(QemuGuestTest, RunsTheKernelTheBuildScriptStaged) {
  const std::string release = ManifestValue("release");
  ASSERT_FALSE(release.empty());
  EXPECT_EQ(Value("uname-r"), release);
  EXPECT_NE(release.find("-rt"), std::string::npos) << release;
}

TEST_F(QemuGuestTest, UnameVersionSaysPreemptRt) {
  EXPECT_NE(Value("uname-v").find(" PREEMPT_RT "), std::string::npos) << Value("uname-v");
}

TEST_F(QemuGuestTest, KernelVerifyRunningPassesInsideTheGuest) {
  EXPECT_EQ(Value("verify-exit"), "0") << Section("verify");
  const std::string report = Section("verify");
  EXPECT_NE(report.find("kernel verify: /proc/config.gz of the running kernel"), std::string::npos)
      << report;
  EXPECT_NE(report.find("set      CONFIG_PREEMPT_RT=y"), std::string::npos) << report;
  EXPECT_NE(report.find("PASS: "), std::string::npos) << report;
}

TEST_F(QemuGuestTest, BothCpusAreOnline) {
  EXPECT_EQ(Value("online"), "0-1");
}

TEST_F(QemuGuestTest, IsolcpusIsInEffect) {
  EXPECT_NE(Value("cmdline").find("isolcpus=nohz,domain,managed_irq,1"), std::string::npos);
  EXPECT_EQ(Value("isolated"), "1");
}

TEST_F(QemuGuestTest, NohzFullIsInEffect) {
  EXPECT_NE(Value("cmdline").find("nohz_full=1"), std::string::npos);
  EXPECT_EQ(Value("nohz_full"), "1");
}

// What docs/kernel.md promises `rtpulse check` says on a correctly set-up RT kernel.
TEST_F(QemuGuestTest, PreflightCheckPassesTheKernelAndIsolationChecks) {
  EXPECT_EQ(Value("check-exit"), "0") << Section("check");
  const std::string text = Section("check.json");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    FAIL() << "check.json is not JSON (" << e.what() << "):\n" << text;
  }
  std::map<std::string, std::string> status;
  for (const auto& check : json["checks"]) status[check["id"]] = check["status"];
  for (const char* id :
       {"kernel.preemption", "kernel.config", "kernel.hrtimers", "kernel.nohz_full",
        "isolation.isolcpus", "isolation.nohz_full", "isolation.rcu_nocbs"}) {
    EXPECT_EQ(status[id], "pass") << id << "\n" << Section("check");
  }
  EXPECT_EQ(json["system"]["preemption_model"], "PREEMPT_RT");
}

TEST_F(QemuGuestTest, TwoSecondLatencyRunWritesValidJson) {
  const std::string run = Section("latency");
  EXPECT_EQ(Value("latency-exit"), "0") << run;
  const std::string text = Section("latency.json");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    FAIL() << "latency.json is not JSON (" << e.what() << "):\n" << text;
  }
  EXPECT_TRUE(json.contains("file_version")) << text;
  ASSERT_TRUE(json.contains("thread")) << text;
  // Measured on this guest's RT kernel, and it measured something.
  EXPECT_EQ(json["sysinfo"]["release"], ManifestValue("release")) << text;
  EXPECT_EQ(json["sysinfo"]["realtime"], 1) << text;
  ASSERT_TRUE(json["thread"].is_object() && !json["thread"].empty()) << text;
  for (const auto& [index, thread] : json["thread"].items()) {
    EXPECT_GT(thread.value("cycles", 0), 0) << "thread " << index << ": " << thread.dump();
  }
}

}  // namespace
}  // namespace rtpulse
