// Helpers shared by the rtpulse control CLI tests (control_cli_test.cc, control_sweep_cli_test.cc).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::control_test {

using rtpulse::testutil::MarkedProcesses;
using rtpulse::testutil::ProcessOptions;
using rtpulse::testutil::ProcessResult;
using rtpulse::testutil::ReadFile;
using rtpulse::testutil::RunProcess;
using rtpulse::testutil::RunRtpulse;
using rtpulse::testutil::TempDir;

/// A light stress-ng mix for the stressed configurations (the study's 75 % --vm-bytes on a
/// machine shared by the test suite is not a test's business).
inline constexpr const char* kLightStress = "stress-ng:--cpu 1 --vm 1 --vm-bytes 32M";

inline std::string ControlMarker() {
  static int n = 0;
  return "RTPULSE_CONTROL_TEST_MARK=" + std::to_string(getpid()) + "_" + std::to_string(++n);
}

inline std::set<int> ControlLeftovers(const std::string& marker) {
  std::set<int> left;
  for (int i = 0; i < 500; ++i) {
    left = MarkedProcesses(marker);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return left;
}

inline std::string Source(const std::string& relative) {
  return std::string(RTPULSE_SOURCE_DIR) + "/" + relative;
}

/// A jobs.csv row; a job whose release is unknown (release_known false) has its start as
/// `release`, the grid's anchor (the file leaves that field empty).
struct Job {
  uint64_t job;
  int64_t release, start, end;
  uint32_t skipped_before;
  bool miss;
  bool release_known;
};

inline std::vector<Job> ReadJobs(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<Job> jobs;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::vector<int64_t> f;
    std::string cell;
    // Empty cells (release, latency, response and an uncertain miss of an unknown release)
    // as -1; the last column may be empty, which getline does not return.
    while (std::getline(s, cell, ',')) f.push_back(cell.empty() ? -1 : std::stoll(cell));
    if (!line.empty() && line.back() == ',') f.push_back(-1);
    if (f.size() != 10) ADD_FAILURE() << "bad jobs.csv line: " << line;
    if (f.size() != 10) continue;
    const bool known = f[9] == 1;
    jobs.push_back({static_cast<uint64_t>(f[0]), known ? f[1] : f[2], f[2], f[3],
                    static_cast<uint32_t>(f[7]), f[8] == 1, known});
  }
  return jobs;
}

/// tests/cli/control_truth.py over the folder and the printed summary.
inline void ExpectTruth(const std::string& run, const std::string& stdout_text) {
  const std::string summary = run + ".stdout";
  std::ofstream(summary) << stdout_text;
  const ProcessResult truth =
      RunProcess({"/usr/bin/python3", Source("tests/cli/control_truth.py"), run, summary});
  EXPECT_EQ(truth.exit_code, 0) << truth.err << truth.out;
}

class ControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for SCHED_FIFO and mlockall";
  }
};

}  // namespace rtpulse::control_test
