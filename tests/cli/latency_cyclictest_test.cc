// cyclictest's remaining options on the real binary (docs/latency.md, "cyclictest options"):
// SIGUSR2's shared-memory statistics read by rt-tests' own get_cyclictest_snapshot, the -F
// named pipe, -o, -R, --dbg_cyclictest, -c, and --smi and --deepest-idle-state through fixture
// trees (the MSR file and cpuidle's files in the formats the kernel gives), so the same code
// paths as on a Pi or an Intel board run here.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

using testutil::BackgroundProcess;
using testutil::ProcessOptions;
using testutil::ReadFile;
using testutil::RunProcess;
using testutil::RunRtpulse;
using testutil::TempDir;

constexpr const char* kSnapshot = "/usr/sbin/get_cyclictest_snapshot";

class LatencyCyclictestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for SCHED_FIFO";
  }
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The data rows of `rtpulse samples FILE --csv`, split at commas; its header row (which
/// starts with a column name, not a thread number) is left out.
std::vector<std::vector<std::string>> SampleCsvRows(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : Lines(csv)) {
    if (line.empty() || !std::isdigit(static_cast<unsigned char>(line[0]))) continue;
    std::istringstream fields(line);
    std::vector<std::string> cells;
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    rows.push_back(std::move(cells));
  }
  return rows;
}

/// The status lines ("T: N (") of `text`.
std::vector<std::string> StatusLines(const std::string& text) {
  std::vector<std::string> out;
  for (auto& line : Lines(text)) {
    if (line.rfind("T:", 0) == 0) out.push_back(line);
  }
  return out;
}

/// The number after `field` ("C:", "Max:") in a status line.
uint64_t Field(const std::string& line, const std::string& field) {
  const size_t at = line.find(field);
  if (at == std::string::npos) return UINT64_MAX;
  return std::stoull(line.substr(at + field.size()));
}

std::set<std::string> SnapshotPids() {
  auto r = RunProcess({kSnapshot, "-l"});
  std::set<std::string> pids;
  for (auto& line : Lines(r.out)) {
    if (!line.empty()) pids.insert(line);
  }
  return pids;
}

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// SIGUSR2 as cyclictest: /dev/shm/cyclictest<PID> exists while the run does, and rt-tests' own
// get_cyclictest_snapshot finds the run, signals it and prints its current status block; the
// snapshot's counts are a moment of the run (above 0, at most the final ones).
TEST_F(LatencyCyclictestTest, GetCyclictestSnapshotReadsARunningLatency) {
  if (access(kSnapshot, X_OK) != 0) GTEST_SKIP() << kSnapshot << " missing (rt-tests)";
  TempDir dir;
  const auto before = SnapshotPids();
  BackgroundProcess run({RTPULSE_BINARY, "latency", "-a", "0", "-t", "2", "-i", "1000", "-D", "3s",
                         "-q", "--json", dir.File("r.json")});
  std::string pid;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const auto& p : SnapshotPids()) {
          if (!before.count(p)) pid = p;
        }
        return !pid.empty();
      },
      std::chrono::milliseconds(2000)))
      << "get_cyclictest_snapshot -l never listed the run";
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ASSERT_EQ(RunProcess({kSnapshot, "-s", pid}).exit_code, 0);
  std::string printed;
  ASSERT_TRUE(WaitFor(
      [&] {
        printed = RunProcess({kSnapshot, "-p", pid}).out;
        return StatusLines(printed).size() == 2;
      },
      std::chrono::milliseconds(2000)))
      << printed;
  EXPECT_NE(printed.find("# cyclictest current status:"), std::string::npos) << printed;
  auto r = run.Stop();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists("/dev/shm/cyclictest" + pid)) << "left behind";
  const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
  const auto snapshot = StatusLines(printed);
  for (size_t t = 0; t < 2; ++t) {
    const auto& thread = j["thread"][std::to_string(t)];
    EXPECT_EQ(snapshot[t].rfind(fmt::format("T:{:2d} (", t), 0), 0u) << snapshot[t];
    const uint64_t cycles = Field(snapshot[t], "C:");
    EXPECT_GT(cycles, 0u) << snapshot[t];
    EXPECT_LE(cycles, thread["cycles"].get<uint64_t>()) << snapshot[t];
    EXPECT_LE(Field(snapshot[t], "Max:"), thread["max"].get<uint64_t>()) << snapshot[t];
  }
}

// -F PATH: a named pipe for the run; each reader gets one status line per thread; removed at
// the end. A path that is not a named pipe is refused and left alone.
TEST_F(LatencyCyclictestTest, FifoHandsOutTheStatusLinesAndGoesAtTheEnd) {
  TempDir dir;
  const std::string fifo = dir.File("stats");
  BackgroundProcess run({RTPULSE_BINARY, "latency", "-a", "0", "-t", "2", "-i", "1000", "-D", "3s",
                         "-q", "-F", fifo});
  ASSERT_TRUE(WaitFor(
      [&] {
        struct stat st {};
        return lstat(fifo.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
      },
      std::chrono::milliseconds(2000)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Blocks until the run opens the pipe to write (at its next tick, within 250 ms).
  const std::string read = ReadFile(fifo);
  const auto lines = StatusLines(read);
  ASSERT_EQ(lines.size(), 2u) << read;
  EXPECT_EQ(lines[1].rfind("T: 1 (", 0), 0u) << read;
  EXPECT_GT(Field(lines[0], "C:"), 0u) << read;
  auto r = run.Stop();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(fifo)) << "the named pipe was left behind";

  { std::ofstream(dir.File("notes.txt")) << "keep me\n"; }
  auto refused = RunRtpulse({"latency", "-t", "1", "-l", "10", "-F", dir.File("notes.txt")});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("not a named pipe"), std::string::npos) << refused.err;
  EXPECT_EQ(ReadFile(dir.File("notes.txt")), "keep me\n");
}

// -v -o RED: one line per RED samples of each thread (its values against a computation over
// known samples: sample_log_test's OscopeMode case), at cycles (period indexes) in order.
TEST_F(LatencyCyclictestTest, OscopeModePrintsOneLinePerGroup) {
  TempDir dir;
  auto r = RunRtpulse({"latency", "-a", "0", "-t", "2", "-d", "0", "-i", "500", "-l", "100", "-v",
                       "-o", "10", "--json", dir.File("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<int, std::vector<uint64_t>> cycles;
  for (const auto& line : Lines(r.out)) {
    int thread = -1;
    unsigned long cycle = 0;
    long latency = 0;
    if (std::sscanf(line.c_str(), "%d:%lu:%ld", &thread, &cycle, &latency) == 3) {
      cycles[thread].push_back(cycle);
    }
  }
  ASSERT_EQ(cycles.size(), 2u) << r.out;
  for (const auto& [thread, seen] : cycles) {
    ASSERT_EQ(seen.size(), 10u) << "thread " << thread << "\n" << r.out;
    const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
    const uint64_t periods = j["thread"][std::to_string(thread)]["periods_elapsed"];
    for (size_t g = 0; g < seen.size(); ++g) {
      // Group g holds samples 10g..10g+9, whose period indexes are at least 10g (a skipped
      // period only adds to them) and below the periods elapsed. (A group with no latency
      // above 0 would repeat the last group's cycle, cyclictest's rule; an abs wake-up is
      // never early, so none does here.)
      EXPECT_GE(seen[g], 10 * g) << "thread " << thread << " group " << g;
      EXPECT_LT(seen[g], periods) << "thread " << thread << " group " << g;
      if (g > 0) {
        EXPECT_GT(seen[g], seen[g - 1]) << "thread " << thread << " group " << g;
      }
    }
  }
}

// -R: both figures, the reported one being clock_getres as python3 reads it; a clock that
// steps by less than 1 us (this VM's, about 20 ns a read) is no warning.
TEST_F(LatencyCyclictestTest, ResolutionReportsTheKernelsFigureAndAMeasuredOne) {
  TempDir dir;
  auto r = RunRtpulse({"latency", "-t", "1", "-l", "5", "-q", "-R", "--json", dir.File("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& w : nlohmann::json::parse(ReadFile(dir.File("r.json")))["rtpulse"]["warnings"]) {
    EXPECT_EQ(w.get<std::string>().find("-R:"), std::string::npos) << w;
  }
  auto py =
      RunProcess({"/usr/bin/python3", "-c",
                  "import time; print(round(time.clock_getres(time.CLOCK_MONOTONIC) * 1e9))"});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  const std::string reported = Lines(py.out).at(0);
  EXPECT_NE(r.err.find("monotonic clock: reported resolution " + reported + " ns, measured about"),
            std::string::npos)
      << r.err;
}

// --dbg_cyclictest: each thread's CPU, priority and interval as planned (cyclictest's -d rule).
TEST_F(LatencyCyclictestTest, DebugPrintsEachThreadsSetUp) {
  auto r = RunRtpulse({"latency", "-a", "0", "-t", "3", "-i", "1000", "-d", "100", "-p", "70", "-l",
                       "3", "-q", "--dbg_cyclictest"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int t = 0; t < 3; ++t) {
    EXPECT_NE(r.err.find(fmt::format("thread {}: CPU 0, fifo priority 70, interval {} us", t,
                                     1000 + 100 * t)),
              std::string::npos)
        << r.err;
  }
}

// -c realtime: the abs and posix paths sleep on CLOCK_REALTIME and measure every loop; the
// samples log holds CLOCK_MONOTONIC deadlines one period apart (no clock step in this run).
TEST_F(LatencyCyclictestTest, RealtimeClockMeasuresEveryLoop) {
  TempDir dir;
  for (const char* path : {"abs", "posix"}) {
    SCOPED_TRACE(path);
    auto r = RunRtpulse({"latency", "-a", "0", "-t", "1", "-i", "1000", "-l", "300", "-q", "-c",
                         "realtime", "--wake", path, "--json", dir.File("r.json"), "--samples",
                         dir.File("s.smp")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
    EXPECT_EQ(j["thread"]["0"]["cycles"], 300);
    auto csv = RunRtpulse({"samples", dir.File("s.smp"), "--csv"});
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    // expected_ns: the fourth column; consecutive deadlines 1 ms apart within the offset's
    // read jitter (a step of the realtime clock would move them, none is made here).
    std::vector<int64_t> expected;
    for (const auto& row : SampleCsvRows(csv.out)) expected.push_back(std::stoll(row.at(3)));
    ASSERT_GT(expected.size(), 250u) << csv.out.substr(0, 400);
    for (size_t i = 1; i < expected.size(); ++i) {
      const int64_t step = expected[i] - expected[i - 1];
      EXPECT_NEAR(static_cast<double>(step % 1'000'000 < 500'000 ? step % 1'000'000
                                                                 : step % 1'000'000 - 1'000'000),
                  0.0, 20'000.0)
          << "deadline " << i << " is " << step << " ns after the previous";
    }
  }
}

/// rteval's cyclictest module, as it runs a tool and reads it (tests/cli/rteval_cyclictest_parse.py
/// re-expresses its reader): its argv (`-h 3500` one argument), stdin and stderr on /dev/null,
/// SIGINT to stop; the reader's JSON of what it got.
nlohmann::json RunTheRtevalWay(std::vector<std::string> tool, const std::string& json_path,
                               const TempDir& dir, int& exit_code) {
  for (const char* arg : {"-i100", "-qmu", "-h 3500", "-p95", "-t2", "-a0-1"})
    tool.emplace_back(arg);
  tool.insert(tool.end(), {"--json", json_path});
  const std::string out = dir.File("stdout.txt");
  std::string shell;
  for (const auto& a : tool) shell += "'" + a + "' ";
  // rteval sends SIGINT (again every 2 s until the tool exits); 3 s of measuring here.
  auto r = RunProcess({"/bin/sh", "-c",
                       shell + "> " + out +
                           " 2>/dev/null </dev/null & p=$!; sleep 3; kill -INT $p; "
                           "wait $p"});
  exit_code = r.exit_code;
  auto parsed =
      RunProcess({"/usr/bin/python3",
                  std::string(RTPULSE_SOURCE_DIR) + "/tests/cli/rteval_cyclictest_parse.py", out,
                  "2", "3500"});
  EXPECT_EQ(parsed.exit_code, 0) << parsed.err;
  return nlohmann::json::parse(parsed.out);
}

// Point 2 of issue 31: rteval reads cyclictest and rtpulse latency alike. Run each its way on
// the same CPUs, its reader finds every histogram row and no unexpected line in either output,
// and what it derives matches each tool's own JSON (samples = cycles while nothing overflowed
// the 3500 us rows; "# Max Latencies" = the JSON's max).
TEST_F(LatencyCyclictestTest, RtevalsReaderReadsRtpulseAsItReadsCyclictest) {
  if (access("/usr/bin/cyclictest", X_OK) != 0) GTEST_SKIP() << "cyclictest missing (rt-tests)";
  TempDir dir;
  struct Tool {
    const char* name;
    std::vector<std::string> argv;
  };
  for (const Tool& tool : {Tool{"cyclictest", {"/usr/bin/cyclictest"}},
                           Tool{"rtpulse", {RTPULSE_BINARY, "latency"}}}) {
    SCOPED_TRACE(tool.name);
    int exit_code = -1;
    const std::string json_path = dir.File(std::string(tool.name) + ".json");
    const auto got = RunTheRtevalWay(tool.argv, json_path, dir, exit_code);
    EXPECT_EQ(exit_code, 0) << "stopped by SIGINT, as rteval stops it";
    EXPECT_TRUE(got["unexpected"].empty()) << got["unexpected"].dump();
    ASSERT_EQ(got["cores"].size(), 2u);
    const auto own = nlohmann::json::parse(ReadFile(json_path));
    for (size_t c = 0; c < 2; ++c) {
      const auto& core = got["cores"][c];
      const auto& thread = own["thread"][std::to_string(c)];
      EXPECT_GT(core["samples"].get<uint64_t>(), 1000u) << "3 s at 100 us";
      EXPECT_EQ(got["max_latencies_line"][c], thread["max"]);
      if (thread["max"].get<int64_t>() < 3500) {
        EXPECT_EQ(core["samples"], thread["cycles"]);
        // rteval's mean is over whole-us rows; the tool's own average is exact.
        EXPECT_NEAR(core["mean"].get<double>(), thread["avg"].get<double>(), 1.0);
      }
    }
  }
}

/// The kernel's TAI offset (CLOCK_TAI - CLOCK_REALTIME, s), set with adjtimex(ADJ_TAI) and put
/// back on destruction: a step of CLOCK_TAI alone, which nothing else here sleeps on.
class TaiOffset {
 public:
  TaiOffset() {
    timex tx{};
    ::adjtimex(&tx);
    original_ = tx.tai;
  }
  ~TaiOffset() { (void)Set(original_); }
  TaiOffset(const TaiOffset&) = delete;
  TaiOffset& operator=(const TaiOffset&) = delete;
  int original() const { return original_; }
  bool Set(int seconds) {
    timex tx{};
    tx.modes = ADJ_TAI;
    tx.constant = seconds;
    return ::adjtimex(&tx) >= 0;
  }

 private:
  int original_ = 0;
};

// -c tai with CLOCK_TAI stepped 1 s forward mid-run (the injected ground truth): as cyclictest,
// the sleeping thread wakes at once 1 s late on its clock, and the grid catches up by skipping
// the periods the step jumped (about 1000 at 1 ms); no other sample is near that late.
TEST_F(LatencyCyclictestTest, AStepOfTheChosenClockIsMeasuredOnThatClock) {
  TempDir dir;
  TaiOffset tai;
  BackgroundProcess run({RTPULSE_BINARY, "latency", "-a", "0", "-t", "1", "-i", "1000", "-D", "3s",
                         "-q", "-c", "tai", "--json", dir.File("r.json"), "--samples",
                         dir.File("s.smp")});
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  ASSERT_TRUE(tai.Set(tai.original() + 1)) << "adjtimex(ADJ_TAI) refused";
  auto r = run.Stop();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto t = nlohmann::json::parse(ReadFile(dir.File("r.json")))["thread"]["0"];
  const int64_t max_ns = t["stats"]["max_ns"];
  EXPECT_GT(max_ns, 990'000'000) << "the 1 s step";
  EXPECT_LT(max_ns, 1'000'000'000 + 20'000'000) << "the 1 s step and a host stall at most";
  // The skipped periods, from the samples log: after each wake-up the grid skips the periods
  // whose deadlines its lateness passed, no more. The step's wake-up skips about 1000 (once);
  // every other skip is its own late sample's (this VM's host stalls for milliseconds), so
  // the total equals the log's gaps and each gap is bounded by the latency before it.
  auto csv = RunRtpulse({"samples", dir.File("s.smp"), "--csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<std::pair<uint64_t, int64_t>> seq_latency;  // columns seq, latency_ns
  for (const auto& row : SampleCsvRows(csv.out)) {
    seq_latency.emplace_back(std::stoull(row.at(2)), std::stoll(row.at(5)));
  }
  ASSERT_GT(seq_latency.size(), 1000u) << csv.out.substr(0, 400);
  uint64_t gaps = 0;
  uint64_t step_gap = 0;
  for (size_t i = 1; i < seq_latency.size(); ++i) {
    const auto [seq, latency] = seq_latency[i - 1];
    const uint64_t gap = seq_latency[i].first - seq - 1;
    gaps += gap;
    EXPECT_LE(gap, static_cast<uint64_t>(std::max<int64_t>(0, latency)) / 1'000'000 + 1)
        << "periods skipped after seq " << seq << " beyond its lateness of " << latency << " ns";
    if (latency == max_ns) step_gap = gap;
  }
  const uint64_t skipped = t["skipped_periods"];
  EXPECT_EQ(skipped, gaps);
  EXPECT_GE(step_gap, 990u) << "the step's wake-up skips the periods it jumped";
  EXPECT_LE(step_gap, 1021u) << "once: its 1 s and a host stall at most (the max's bound)";
  // One wake-up saw the step; p99 is the run's ordinary latency, far below it.
  EXPECT_LT(t["stats"]["p99_ns"].get<int64_t>(), 100'000'000);
}

/// A fixture root for --smi: an Intel family 6 CPU with MSRs, and /dev/cpu/0/msr as a file
/// holding `count` at offset 0x34 (the msr driver's pread there returns the register).
void WriteSmiFixture(const TempDir& root, uint64_t count) {
  std::filesystem::create_directories(root.File("proc"));
  std::filesystem::create_directories(root.File("sys/devices/system/cpu"));
  std::filesystem::create_directories(root.File("dev/cpu/0"));
  { std::ofstream(root.File("sys/devices/system/cpu/online")) << "0\n"; }
  {
    std::ofstream(root.File("proc/cpuinfo"))
        << "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 154\n"
           "flags\t\t: fpu vme de pse tsc msr pae mce\n\n";
  }
  std::string msr(0x34 + 8, '\0');
  for (size_t b = 0; b < 8; ++b) msr[0x34 + b] = static_cast<char>((count >> (8 * b)) & 0xff);
  std::ofstream(root.File("dev/cpu/0/msr"), std::ios::binary) << msr;
}

// --smi: the counter read at the path's start and end; 0xFFFFFFF0 -> 0x0000000A mid-run is
// 26 SMIs across the 32-bit wrap, in the status line, the -h block and the JSON.
TEST_F(LatencyCyclictestTest, SmiCountsTheMsrCounterAcrossItsWrap) {
  TempDir root;
  TempDir dir;
  WriteSmiFixture(root, 0xFFFFFFF0ULL | (0xABCDULL << 32));  // high bits are not the count
  ProcessOptions options;
  options.extra_env = {"RTPULSE_SYSROOT=" + root.path()};
  BackgroundProcess run({RTPULSE_BINARY, "latency", "-a", "0", "-t", "1", "-i", "1000", "-D", "2s",
                         "-q", "-h", "100", "--smi", "--json", dir.File("r.json")},
                        options);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  WriteSmiFixture(root, 0x0000000A);
  auto r = run.Stop();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
  EXPECT_EQ(j["thread"]["0"]["smi_count"], 26) << j.dump(1).substr(0, 2000);
  EXPECT_NE(r.out.find("# SMIs: 00026"), std::string::npos) << r.out;
}

// --smi where it cannot count: a CPU other than Intel's (this machine's, when it is one) and a
// missing msr driver; exit 3 before measuring, nothing written.
TEST_F(LatencyCyclictestTest, SmiWhereItCannotCountIsAResourceError) {
  TempDir dir;
  if (ReadFile("/proc/cpuinfo").find("GenuineIntel") == std::string::npos) {
    auto r = RunRtpulse(
        {"latency", "-a", "0", "-t", "1", "-l", "10", "--smi", "--json", dir.File("r.json")});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("--smi: not on this CPU"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.File("r.json")));
  }
  TempDir root;
  WriteSmiFixture(root, 1);
  std::filesystem::remove(root.File("dev/cpu/0/msr"));
  ProcessOptions options;
  options.extra_env = {"RTPULSE_SYSROOT=" + root.path()};
  auto r = RunRtpulse({"latency", "-a", "0", "-t", "1", "-l", "10", "--smi"}, options);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("modprobe msr"), std::string::npos) << r.err;
}

/// A fixture root whose CPU 0 has cpuidle states 0..3 (POLL, C1, C1E, C6), all enabled.
void WriteIdleFixture(const TempDir& root) {
  std::filesystem::create_directories(root.File("sys/devices/system/cpu"));
  { std::ofstream(root.File("sys/devices/system/cpu/online")) << "0\n"; }
  const char* names[] = {"POLL", "C1", "C1E", "C6"};
  for (int k = 0; k < 4; ++k) {
    const std::string state =
        root.File(fmt::format("sys/devices/system/cpu/cpu0/cpuidle/state{}", k));
    std::filesystem::create_directories(state);
    std::ofstream(state + "/name") << names[k] << "\n";
    std::ofstream(state + "/disable") << "0\n";
  }
}

std::string Disable(const TempDir& root, int k) {
  return ReadFile(root.File(fmt::format("sys/devices/system/cpu/cpu0/cpuidle/state{}/disable", k)));
}

// --deepest-idle-state 1: states 2 and 3 off while measuring, back on after; the JSON says
// what was done. -1 turns every state off.
TEST_F(LatencyCyclictestTest, DeepestIdleStateLimitsTheStatesForTheRunOnly) {
  TempDir root;
  TempDir dir;
  WriteIdleFixture(root);
  ProcessOptions options;
  options.extra_env = {"RTPULSE_SYSROOT=" + root.path()};
  BackgroundProcess run({RTPULSE_BINARY, "latency", "-a", "0", "-t", "1", "-i", "1000", "-D", "2s",
                         "-q", "--deepest-idle-state", "1", "--json", dir.File("r.json")},
                        options);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(Disable(root, 0), "0\n");
  EXPECT_EQ(Disable(root, 1), "0\n");
  EXPECT_EQ(Disable(root, 2).substr(0, 1), "1");
  EXPECT_EQ(Disable(root, 3).substr(0, 1), "1");
  auto r = run.Stop();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int k = 0; k < 4; ++k) EXPECT_EQ(Disable(root, k), "0\n") << "state " << k;
  const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
  const std::string record = j["rtpulse"]["idle_states"].get<std::string>();
  EXPECT_NE(record.find("then restored"), std::string::npos) << record;
  EXPECT_NE(record.find("idle state 2 (C1E) of CPU 0"), std::string::npos) << record;
  EXPECT_NE(record.find("idle state 3 (C6) of CPU 0"), std::string::npos) << record;
  EXPECT_EQ(record.find("state 1 "), std::string::npos) << record;

  auto all = RunRtpulse({"latency", "-a", "0", "-t", "1", "-l", "50", "-q", "--deepest-idle-state",
                         "-1", "--json", dir.File("all.json")},
                        options);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const auto every = nlohmann::json::parse(ReadFile(dir.File("all.json")));
  EXPECT_NE(every["rtpulse"]["idle_states"].get<std::string>().find("idle state 0 (POLL)"),
            std::string::npos);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(Disable(root, k), "0\n") << "state " << k;
}

// On a machine without cpuidle (this VM): a warning that says so, recorded, and the run goes on.
TEST_F(LatencyCyclictestTest, DeepestIdleStateWithoutCpuidleWarns) {
  TempDir root;
  std::filesystem::create_directories(root.File("sys/devices/system/cpu"));
  { std::ofstream(root.File("sys/devices/system/cpu/online")) << "0\n"; }
  TempDir dir;
  ProcessOptions options;
  options.extra_env = {"RTPULSE_SYSROOT=" + root.path()};
  auto r = RunRtpulse({"latency", "-a", "0", "-t", "1", "-l", "20", "-q", "--deepest-idle-state",
                       "0", "--json", dir.File("r.json")},
                      options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("no cpuidle states"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
  EXPECT_EQ(j["rtpulse"]["idle_states"], "none disabled");
  bool recorded = false;
  for (const auto& w : j["rtpulse"]["warnings"]) {
    if (w.get<std::string>().find("no cpuidle states") != std::string::npos) recorded = true;
  }
  EXPECT_TRUE(recorded) << j["rtpulse"]["warnings"].dump();
}

}  // namespace
}  // namespace rtpulse
