// --textfile of the batch runs: `latency` and `suite` leave rtpulse.prom for node_exporter's
// textfile collector, rewritten at checkpoints and at the end. Its numbers are recomputed from
// the run's samples by tests/export/textfile_truth.py, and a real node_exporter serves it.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "support/http_client.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

using namespace std::chrono_literals;

const std::string kTruth = std::string(RTPULSE_SOURCE_DIR) + "/tests/export/textfile_truth.py";

std::string Status(const std::string& prom) {
  std::smatch m;
  static const std::regex status(R"re(rtpulse_run_info\{command="[a-z]+",status="([a-z]+)"\} 1)re");
  return std::regex_search(prom, m, status) ? m[1].str() : "";
}

TEST(TextfileCli, LatencyFileAgreesWithTheSamplesRecomputedInPython) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root (SCHED_FIFO probes)";
  testutil::TempDir dir;
  const auto r = testutil::RunRtpulse({"latency", "-a", "0", "-t", "2", "-p", "80", "-i", "500",
                                       "-D", "3s", "-q", "--inject", "1ms@20Hz", "--samples",
                                       dir.File("run.smp"), "--textfile", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string prom = testutil::ReadFile(dir.File("rtpulse.prom"));
  EXPECT_EQ(Status(prom), "complete") << prom.substr(0, 400);
  EXPECT_NE(prom.find("rtpulse_injected_delays_total{cpu=\"0\",thread=\"1\",wake=\"abs\"} "),
            std::string::npos);
  // Only the finished file is there: its temporary name never ends in .prom.
  for (const auto& name : dir.List())
    EXPECT_FALSE(name.find(".prom.tmp") != std::string::npos) << name;
  const auto truth = testutil::RunProcess(
      {"/usr/bin/python3", kTruth, dir.File("run.smp"), dir.File("rtpulse.prom")});
  EXPECT_EQ(truth.exit_code, 0) << truth.out << truth.err;
  EXPECT_NE(truth.out.find("2 threads"), std::string::npos) << truth.out;

  // The truth script does fail on a file that says something else.
  std::string tampered = prom;
  const std::regex count(R"((rtpulse_latency_seconds_count\{[^}]*thread="0"[^}]*\}) (\d+))");
  tampered = std::regex_replace(tampered, count, "$1 7", std::regex_constants::format_first_only);
  ASSERT_NE(tampered, prom);
  std::ofstream(dir.File("tampered.prom")) << tampered;
  const auto caught = testutil::RunProcess(
      {"/usr/bin/python3", kTruth, dir.File("run.smp"), dir.File("tampered.prom")});
  EXPECT_EQ(caught.exit_code, 1) << caught.out;
}

TEST(TextfileCli, LatencyCheckpointSaysRunningAndAnInterruptSaysSo) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root (SCHED_FIFO probes)";
  testutil::TempDir dir;
  std::string seen_running;
  testutil::ProcessOptions o;
  o.signal = SIGINT;
  o.signal_when = [&] {
    // SIGINT once the first checkpoint (10 s) has written the file.
    if (!std::filesystem::exists(dir.File("rtpulse.prom"))) return false;
    seen_running = Status(testutil::ReadFile(dir.File("rtpulse.prom")));
    return true;
  };
  const auto r = testutil::RunRtpulse(
      {"latency", "-a", "0", "-t", "1", "-i", "1000", "-D", "60s", "-q", "--textfile", dir.path()},
      o);
  EXPECT_EQ(r.exit_code, 0) << r.err;  // latency exits 0 when stopped, as cyclictest
  EXPECT_EQ(seen_running, "running");
  const std::string prom = testutil::ReadFile(dir.File("rtpulse.prom"));
  EXPECT_EQ(Status(prom), "interrupted");
  EXPECT_NE(prom.find("rtpulse_latency_seconds_count{cpu=\"0\",thread=\"0\",wake=\"abs\"} "),
            std::string::npos);
}

TEST(TextfileCli, SuiteFileIsServedByARealNodeExporter) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root (SCHED_FIFO probes)";
  const std::string exporter = "/usr/bin/prometheus-node-exporter";
  if (!std::filesystem::exists(exporter)) {
    GTEST_SKIP() << "apt-get install prometheus-node-exporter";
  }
  testutil::TempDir dir;
  std::filesystem::create_directories(dir.File("textfiles"));
  std::string seen_running;
  testutil::ProcessOptions o;
  o.timeout = 120'000ms;
  testutil::BackgroundProcess suite(
      {RTPULSE_BINARY, "suite", "--scenarios", "idle", "-D", "6s", "--settle", "0",
       "--checkpoint-interval", "1s", "--cpus", "0", "-q", "--out", dir.File("run"), "--textfile",
       dir.File("textfiles")},
      o);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!suite.Exited() && std::chrono::steady_clock::now() < deadline && seen_running.empty()) {
    const std::string path = dir.File("textfiles/rtpulse.prom");
    if (std::filesystem::exists(path)) {
      const std::string prom = testutil::ReadFile(path);
      if (Status(prom) == "running" &&
          prom.find("rtpulse_latency_seconds_count{scenario=\"idle\"") != std::string::npos) {
        seen_running = "running";
      }
    }
    std::this_thread::sleep_for(100ms);
  }
  while (!suite.Exited() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  // Stop() signals only a process still running: it had a minute to finish its 6 s.
  const auto r = suite.Stop();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(seen_running, "running") << "no checkpoint with the scenario's series was seen";
  const std::string prom = testutil::ReadFile(dir.File("textfiles/rtpulse.prom"));
  EXPECT_EQ(Status(prom), "complete");

  const uint16_t port = testutil::FreeLoopbackPort();
  testutil::BackgroundProcess node({exporter, "--collector.disable-defaults",
                                    "--collector.textfile",
                                    "--collector.textfile.directory=" + dir.File("textfiles"),
                                    "--web.listen-address=127.0.0.1:" + std::to_string(port)});
  testutil::HttpReply reply;
  for (int i = 0; i < 100 && reply.status != 200; ++i) {
    reply = testutil::HttpGet(port, "/metrics");
    if (reply.status != 200) std::this_thread::sleep_for(100ms);
  }
  node.Stop();
  ASSERT_EQ(reply.status, 200);
  EXPECT_NE(reply.body.find("node_textfile_scrape_error 0"), std::string::npos)
      << reply.body.substr(0, 2000);
  std::smatch m;
  const std::regex in_file(
      R"re(rtpulse_latency_seconds_count\{cpu="0",scenario="idle",thread="0",wake="abs"\} (\d+))re");
  ASSERT_TRUE(std::regex_search(reply.body, m, in_file)) << reply.body.substr(0, 3000);
  EXPECT_GT(std::stoull(m[1].str()), 1000U);  // 6 s at 1 kHz, less what a stall swallowed
  EXPECT_NE(reply.body.find("rtpulse_run_info{command=\"suite\",status=\"complete\"} 1"),
            std::string::npos);
}

TEST(TextfileCli, AFolderThatIsNotThereIsOneLineExit2) {
  testutil::TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"latency", "-D", "1s", "--textfile", dir.File("missing")},
        std::vector<std::string>{"suite", "-D", "1s", "--out", dir.File("run"), "--textfile",
                                 dir.File("missing")}}) {
    const auto r = testutil::RunRtpulse(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--textfile '" + dir.File("missing") + "': not a folder"),
              std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("run")));
}

}  // namespace
}  // namespace rtpulse
