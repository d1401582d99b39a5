// rtpulse noise end to end: a real run whose every number an independent script recomputes
// from its events file, with a thread of the test taking the polled CPU at known times (each
// span must be found); bad input refused before anything runs or is written; SIGINT leaving
// valid partial results.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/clock.h"
#include "core/cpus.h"
#include "support/cli_refusal.h"
#include "support/cpu_taker.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

using nlohmann::json;
using testutil::ProcessOptions;
using testutil::ProcessResult;
using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::TempDir;

int PolledCpu() {
  return OnlineCpus(FsRoot::Live()).back();
}

using testutil::Span;

struct EventLine {
  int cpu = 0;
  int64_t start_ns = 0;
  int64_t gap_ns = 0;
};

std::vector<EventLine> ReadEvents(const std::string& path) {
  std::istringstream in(ReadFile(path));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("cpu,start_ns,gap_ns", 0), 0u) << line;
  std::vector<EventLine> out;
  while (std::getline(in, line)) {
    EventLine e;
    EXPECT_EQ(std::sscanf(line.c_str(), "%d,%ld,%ld", &e.cpu, &e.start_ns, &e.gap_ns), 3) << line;
    out.push_back(e);
  }
  return out;
}

TEST(NoiseCliTest, EveryNumberMatchesThePythonTruthAndTheTakenSpansAreFound) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "SCHED_FIFO needs root";
  TempDir dir;
  const int cpu = PolledCpu();
  // The test's own thread at SCHED_FIFO 96, above noise's default 95: 2 ms every 100 ms.
  std::vector<Span> spans;
  std::string error;
  std::thread taker([&] {
    spans = testutil::TakeTheCpu(cpu, 96, MonotonicNs() + 500 * kNsPerMs, 100 * kNsPerMs,
                                 2 * kNsPerMs, 10, &error);
  });
  // With --explain: the truth script also checks every event's causes and their sums.
  const ProcessResult r =
      RunRtpulse({"noise", "-c", std::to_string(cpu), "-D", "2", "--explain", "--json",
                  dir.File("noise.json"), "--events", dir.File("events.csv")});
  taker.join();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  ASSERT_EQ(spans.size(), 10u) << "the test's thread could not take CPU " << cpu << ": " << error;
  std::ofstream(dir.File("stdout.txt")) << r.out;
  const ProcessResult truth = testutil::RunProcess(
      {"/usr/bin/python3", std::string(testutil::SourceDirPath()) + "/tests/cli/noise_truth.py",
       dir.File("noise.json"), dir.File("events.csv"), dir.File("stdout.txt")});
  ASSERT_EQ(truth.exit_code, 0) << truth.err << truth.out;
  EXPECT_NE(truth.out.find("cpu " + std::to_string(cpu) + ":"), std::string::npos) << truth.out;
  EXPECT_NE(truth.out.find(" explained"), std::string::npos) << "the causes were checked";
  const json doc = json::parse(ReadFile(dir.File("noise.json")));
  EXPECT_EQ(doc["rtpulse"]["policy"], "fifo");
  EXPECT_EQ(doc["rtpulse"]["priority"], 95);
  EXPECT_EQ(doc["return_code"], 0);
  // Each span the test's thread took is inside one event (the poller's last read before it,
  // its first after).
  const std::vector<EventLine> events = ReadEvents(dir.File("events.csv"));
  for (const Span& s : spans) {
    const bool covered = std::any_of(events.begin(), events.end(), [&](const EventLine& e) {
      return e.cpu == cpu && e.start_ns <= s.start_ns && e.start_ns + e.gap_ns >= s.end_ns;
    });
    EXPECT_TRUE(covered) << "no event covers the 2 ms span at " << s.start_ns;
  }
}

TEST(NoiseCliTest, BadInputIsOneLineExit2AndNothingWritten) {
  TempDir dir;
  struct Case {
    std::vector<std::string> args;
    std::string named;  ///< What the one line must name.
  };
  const std::vector<Case> cases = {
      {{"-c", "4096"}, "4096"},
      {{"-b", "2"}, "-b 2"},
      {{"-W", "0us"}, "0us"},
      {{"--threshold", "5"}, "unit"},
      {{"-f", "0"}, "-f 0"},
      {{"--policy", "fast"}, "fast"},
      {{"-T", "x"}, "-T x"},
      {{"-D", "soon"}, "soon"},
      {{"-f", "5", "--policy", "rr:5"}, "-f and --policy"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"noise", "--json", dir.File("n.json")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const ProcessResult r = RunRtpulse(args);
    SCOPED_TRACE(c.named);
    testutil::ExpectOneLineRefusal(r, c.named);
    EXPECT_FALSE(std::filesystem::exists(dir.File("n.json")));
  }
}

// Without the privilege SCHED_FIFO needs: exit 3 with the fix, nothing measured; the same
// user polls at --policy other.
TEST(NoiseCliTest, WithoutPrivilegeFifoIsRefusedWithTheFixAndOtherRuns) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "runs the binary as nobody, which needs root";
  ProcessOptions nobody;
  nobody.run_as_uid = 65534;
  const std::string cpu = std::to_string(PolledCpu());
  const ProcessResult fifo = RunRtpulse({"noise", "-c", cpu, "-D", "1", "-q"}, nobody);
  EXPECT_EQ(fifo.exit_code, 3) << fifo.err;
  EXPECT_NE(fifo.err.find("cannot set policy fifo priority 95"), std::string::npos) << fifo.err;
  EXPECT_NE(fifo.err.find("fix: run as root (sudo), or poll at --policy other"), std::string::npos)
      << fifo.err;
  EXPECT_EQ(fifo.out, "");
  const ProcessResult other =
      RunRtpulse({"noise", "-c", cpu, "-D", "1", "-q", "--policy", "other"}, nobody);
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out.find("noise: other 0"), std::string::npos) << other.out;
}

TEST(NoiseCliTest, SigintLeavesValidPartialResultsAndExits130) {
  TempDir dir;
  ProcessOptions options;
  options.signal = SIGINT;
  options.signal_after = std::chrono::milliseconds(800);
  const ProcessResult r =
      RunRtpulse({"noise", "-c", std::to_string(PolledCpu()), "--policy", "other", "-D", "0",
                  "--json", dir.File("n.json"), "--events", dir.File("e.csv"), "-q"},
                 options);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  const json doc = json::parse(ReadFile(dir.File("n.json")));
  EXPECT_EQ(doc["return_code"], 130);
  EXPECT_TRUE(doc["rtpulse"]["interrupted"].get<bool>());
  const json& c = doc["rtpulse"]["cpus"][0];
  EXPECT_GT(c["gaps"].get<uint64_t>(), 0u);
  EXPECT_GT(c["duration_ns"].get<int64_t>(), 500 * kNsPerMs);
  EXPECT_NE(r.out.find("(interrupted: partial)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Core:"), std::string::npos) << "-q prints the summary only";
  EXPECT_TRUE(std::filesystem::exists(dir.File("e.csv")));
}

}  // namespace
}  // namespace rtpulse
