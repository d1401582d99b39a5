// Runs the built `rtpulse samples` on files written here and checks its exact output.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "measure/sample_log.h"
#include "measure/wake_path.h"
#include "support/subprocess.h"

namespace rtpulse::cli {
namespace {

namespace fs = std::filesystem;
using measure::SampleRecord;

class SamplesCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "rtpulse_samples_cli_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = (dir_ / "run.samples").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs `rtpulse samples ARGS...` (the shared subprocess runner, no shell).
  static testutil::ProcessResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), "samples");
    return testutil::RunRtpulse(args);
  }

  static SampleRecord Record(uint16_t thread, uint16_t cpu, uint64_t seq, int64_t expected_ns,
                             int64_t actual_ns, measure::WakePath wake, uint8_t flags) {
    SampleRecord r{};
    r.thread = thread;
    r.cpu = cpu;
    r.seq = seq;
    r.expected_ns = expected_ns;
    r.actual_ns = actual_ns;
    r.wake_path = static_cast<uint8_t>(wake);
    r.flags = flags;
    return r;
  }

  // Three records: two threads, an unpinned CPU, an early wake-up and a missed period.
  void WriteSamples(uint64_t dropped, bool finish = true) {
    auto sink = measure::OpenSamplesFile(path_, {1'700'000'000'000'000'000, 5'000'000'000});
    ASSERT_TRUE(sink) << sink.error().message;
    const SampleRecord records[] = {
        Record(0, 2, 0, 5'001'000'000, 5'001'012'345, measure::WakePath::kAbs, 0),
        Record(1, 0xFFFF, 0, 5'001'000'000, 5'000'999'100, measure::WakePath::kTimerfd, 0),
        Record(0, 2, 1, 5'002'000'000, 5'003'500'000, measure::WakePath::kAbs,
               SampleRecord::kMissed),
    };
    ASSERT_TRUE((*sink)->Write(records, std::size(records)));
    // Unfinished, the sink keeps "<path>.tmp.<pid>" with the records and no trailer.
    if (finish) {
      ASSERT_TRUE((*sink)->Finish(dropped, false));
    }
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(SamplesCommandTest, CsvListsEveryRecord) {
  WriteSamples(0);
  const auto r = Run({"--csv", path_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "thread,cpu,seq,expected_ns,actual_ns,latency_ns,wake,missed\n"
            "0,2,0,5001000000,5001012345,12345,abs,0\n"
            "1,-1,0,5001000000,5000999100,-900,timerfd,0\n"
            "0,2,1,5002000000,5003500000,1500000,abs,1\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(SamplesCommandTest, SummaryOfACompleteFile) {
  WriteSamples(0);
  const auto r = Run({path_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "samples file  " + path_ +
                       "\n"
                       "started       2023-11-14T22:13:20Z (CLOCK_MONOTONIC 5000000000 ns)\n"
                       "records       3\n"
                       "latency       min -0.900 us, max 1500.000 us\n"
                       "missed        1\n"
                       "dropped       0\n"
                       "interrupted   no\n"
                       "  thread 0    cpu 2   2 records, min 12.345 us, max 1500.000 us, missed 1\n"
                       "  thread 1    cpu -1  1 record, min -0.900 us, max -0.900 us, missed 0\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(SamplesCommandTest, CsvWithSummaryKeepsStdoutPureCsv) {
  WriteSamples(0);
  const auto r = Run({"--csv", "--summary", path_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("thread,cpu,seq,", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("records"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("records       3\n"), std::string::npos) << r.err;
}

TEST_F(SamplesCommandTest, DropsAreWarnedAbout) {
  WriteSamples(7);
  const auto r = Run({path_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dropped       7\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err,
            "rtpulse: warning: 7 records were dropped while recording (the samples ring "
            "was full) and are missing from '" +
                path_ + "'\n");
}

TEST_F(SamplesCommandTest, FileWithoutTrailerIsReadWithAWarning) {
  WriteSamples(0, /*finish=*/false);
  path_ += ".tmp." + std::to_string(::getpid());
  const auto r = Run({path_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("records       3\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dropped       unknown (no trailer)\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "rtpulse: warning: '" + path_ +
                       "' has no trailer: the run did not finish cleanly (crash, or still "
                       "running), so it may be cut short and its drop count is unknown\n");
}

TEST_F(SamplesCommandTest, GarbageFileIsOneLineErrorAndExit2) {
  std::ofstream(path_) << "this is not a samples file, just some text that is long enough\n";
  const auto r = Run({"--csv", path_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "") << "nothing is printed from a bad file";
  EXPECT_EQ(r.err, "rtpulse: error: samples file '" + path_ +
                       "', byte offset 0: magic is \"this is \", expected \"RTPSMPL1\": not an "
                       "rtpulse samples file; give a file written by 'rtpulse latency "
                       "--samples'\n");
}

TEST_F(SamplesCommandTest, MissingFileIsOneLineErrorAndExit2) {
  const std::string missing = (dir_ / "missing.samples").string();
  const auto r = Run({missing});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "rtpulse: error: cannot read samples file '" + missing +
                       "': No such file or directory (check the path)\n");
}

TEST_F(SamplesCommandTest, MissingArgumentIsExit2) {
  const auto r = Run({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "rtpulse: error: FILE is required\n");
}

// ---- --check ----------------------------------------------------------------------------

TEST_F(SamplesCommandTest, CheckOfAWholeFileSaysSoAndExits0) {
  WriteSamples(0);
  const auto r = Run({"--check", path_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "samples file  " + path_ + "\nversion       2\nbytes         " +
                       std::to_string(fs::file_size(path_)) +
                       "\nblocks        1 whole, 0 bad\n"
                       "index         present, matches the blocks\n"
                       "trailer       yes\n"
                       "records       3 recovered\n"
                       "torn          none\n"
                       "status        whole\n");
  EXPECT_EQ(r.err, "");
}

// A killed run's file cut inside its second block: the first block's 4096 records are
// recovered, and the torn tail's offset is where the file's own first block header says
// that block ends (read here from the bytes, not by rtpulse).
TEST_F(SamplesCommandTest, CheckOfATornFileSaysWhatWasRecoveredAndExits1) {
  {
    auto sink = measure::OpenSamplesFile(path_, {0, 1'000'000'000});
    ASSERT_TRUE(sink) << sink.error().message;
    std::vector<SampleRecord> records;
    for (uint64_t i = 0; i < 5000; ++i) {
      records.push_back(Record(
          0, 1, i, 1'000'000'000 + static_cast<int64_t>(i) * 1'000'000,
          1'000'020'000 + static_cast<int64_t>(i) * 1'000'000 + static_cast<int64_t>(i % 7) * 100,
          measure::WakePath::kAbs, 0));
    }
    ASSERT_TRUE((*sink)->Write(records.data(), records.size()));
  }  // killed: no trailer
  const std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  std::ifstream in(tmp, std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), {}};
  ASSERT_GT(bytes.size(), 200u);
  ASSERT_EQ(bytes.substr(64, 4), "RTPB");
  uint32_t payload = 0;
  std::memcpy(&payload, bytes.data() + 68, 4);
  const size_t first_end = 64 + 40 + payload;
  ASSERT_LT(first_end + 10, bytes.size());
  std::ofstream(tmp, std::ios::binary | std::ios::trunc) << bytes.substr(0, first_end + 10);

  const auto r = Run({"--check", tmp});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("blocks        1 whole, 1 bad\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("trailer       no\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("records       4096 recovered\n"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("torn          10 bytes from byte offset " + std::to_string(first_end) + "\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("status        damaged: no trailer; torn tail"), std::string::npos) << r.out;

  // The plain reader recovers the same and warns with the same offset.
  const auto plain = Run({tmp});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("records       4096\n"), std::string::npos) << plain.out;
  EXPECT_NE(plain.err.find("10 bytes from byte offset " + std::to_string(first_end)),
            std::string::npos)
      << plain.err;
}

TEST_F(SamplesCommandTest, CheckOfANonSamplesFileIsExit2) {
  std::ofstream(path_) << "this is not a samples file, just some text that is long enough\n";
  const auto r = Run({"--check", path_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("not an rtpulse samples file"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rtpulse::cli
