#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::monitor::testing {

/// A writable copy of the Raspberry Pi 5 fixture tree and of the fake vcgencmd, so a test
/// can change values between samples.
class PiFixture {
 public:
  PiFixture() {
    namespace fs = std::filesystem;
    const auto options = fs::copy_options::recursive;
    fs::copy(std::string(RTPULSE_TEST_DATA) + "/sysroots/monitor-pi5", root(), options);
    fs::copy(std::string(RTPULSE_TEST_DATA) + "/fake-vcgencmd", bin(), options);
  }
  std::string root() const { return dir_.path() + "/root"; }
  std::string bin() const { return dir_.path() + "/bin"; }
  std::string out() const { return dir_.path(); }

  /// Replaces a file of the tree (`path` absolute inside it, e.g. "/proc/stat").
  void Write(const std::string& path, const std::string& content) const {
    std::ofstream(root() + path, std::ios::trunc) << content;
  }
  void WriteBin(const std::string& name, const std::string& content) const {
    std::ofstream(bin() + "/" + name, std::ios::trunc) << content;
  }
  void Stat(int user, int idle, int steal, int ctxt) const {
    std::string text = fmt::format("cpu  {} 0 0 {} 0 0 0 {} 0 0\n", 4 * user, 4 * idle, 4 * steal);
    for (int cpu = 0; cpu < 4; ++cpu) {
      text += fmt::format("cpu{} {} 0 0 {} 0 0 0 {} 0 0\n", cpu, user, idle, steal);
    }
    text += fmt::format("intr 4000 0 0\nctxt {}\nbtime 1700000000\n", ctxt);
    Write("/proc/stat", text);
  }
  void Interrupts(int cpu0_timer) const {
    Write("/proc/interrupts",
          fmt::format("           CPU0       CPU1       CPU2       CPU3\n"
                      " 11: {} 900 900 900 GICv2  30 Level     arch_timer\n"
                      "IPI0: 100 100 100 100 Rescheduling interrupts\nErr:          0\n",
                      cpu0_timer));
  }
  void Softirqs(int cpu1_timer) const {
    Write("/proc/softirqs",
          fmt::format("                    CPU0       CPU1       CPU2       CPU3\n"
                      "          HI:          0          0          0          0\n"
                      "       TIMER:        400 {} 400 400\n"
                      "      NET_RX:        100        100        100        100\n",
                      cpu1_timer));
  }

 private:
  testutil::TempDir dir_;
};

}  // namespace rtpulse::monitor::testing
