// e2e's actuation on real files and descriptors: --alert parsing, the stdout and file sinks
// (one line per change, with the times and frames given), and the GPIO sinks' errors on a
// machine without GPIO. The GPIO line itself is driven and read back in the QEMU guest's
// gpio-sim (tests/kernel/qemu_gpio_test.cc).
#include "e2e/actuation.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "measure/gpio.h"

namespace rtpulse::e2e {
namespace {

struct Decision {
  bool obstacle;
  uint64_t frame;
  int64_t now_ns;
};

// Frames 0..7: clear, clear, obstacle, obstacle, clear, obstacle, obstacle, clear.
const std::vector<Decision> kDecisions = {
    {false, 0, 1'000}, {false, 1, 2'000}, {true, 2, 3'500}, {true, 3, 4'000},
    {false, 4, 5'250}, {true, 5, 6'000},  {true, 6, 7'000}, {false, 7, 9'876'543'210}};

/// The lines the sink must write for kDecisions, computed from the decisions alone: a line
/// whenever the decision differs from the one before (the state starts clear).
std::string ExpectedLines() {
  std::string out;
  bool state = false;
  for (const auto& d : kDecisions) {
    if (d.obstacle == state) continue;
    out += std::to_string(d.now_ns) + " " + std::to_string(d.frame) + " " +
           (d.obstacle ? "obstacle" : "clear") + "\n";
    state = d.obstacle;
  }
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "actuation-XXXXXX").string();
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

TEST(AlertSpecTest, EveryFormParses) {
  auto none = ParseAlertSpec("none");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->kind, AlertKind::kNone);
  auto out = ParseAlertSpec("stdout");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->kind, AlertKind::kStdout);
  auto file = ParseAlertSpec("file:/tmp/a b.txt");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->kind, AlertKind::kFile);
  EXPECT_EQ(file->target, "/tmp/a b.txt");
  auto gpio = ParseAlertSpec("gpio:gpiochip0:17");
  ASSERT_TRUE(gpio);
  EXPECT_EQ(gpio->kind, AlertKind::kGpio);
  EXPECT_EQ(gpio->target, "gpio:gpiochip0:17");
  EXPECT_EQ(gpio->text, "gpio:gpiochip0:17");
}

TEST(AlertSpecTest, BadSpecsAreUsageErrorsNamingThem) {
  for (const char* bad : {"", "led", "file:", "gpio:gpiochip0", "gpio::1", "STDOUT"}) {
    SCOPED_TRACE(bad);
    auto spec = ParseAlertSpec(bad);
    ASSERT_FALSE(spec);
    EXPECT_EQ(spec.error().code, ExitCode::kUsage);
    EXPECT_NE(spec.error().message.find(std::string("'") + bad + "'"), std::string::npos)
        << spec.error().message;
  }
  auto spec = ParseAlertSpec("led");
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("none, stdout, file:PATH or gpio:CHIP:LINE"),
            std::string::npos)
      << spec.error().message;
}

TEST(AlertSinkTest, FileSinkWritesOneLinePerChangeWithItsTimeAndFrame) {
  const std::string dir = TempDir();
  const std::string path = dir + "/alerts.txt";
  { std::ofstream(path) << "old content that must go\n"; }
  auto spec = ParseAlertSpec("file:" + path);
  ASSERT_TRUE(spec);
  auto sink = OpenAlert(*spec);
  ASSERT_TRUE(sink) << sink.error().message;
  EXPECT_EQ(ReadAll(path), "");  // truncated on open
  EXPECT_EQ((*sink)->Describe(), "file " + path);
  for (size_t i = 0; i < kDecisions.size(); ++i) {
    const auto& d = kDecisions[i];
    ASSERT_TRUE((*sink)->Set(d.obstacle, d.frame, d.now_ns));
    // Written at once (one write per change): a reader sees it before the next frame.
    const std::string expected = [&] {
      std::string out;
      bool state = false;
      for (size_t j = 0; j <= i; ++j) {
        if (kDecisions[j].obstacle == state) continue;
        out += std::to_string(kDecisions[j].now_ns) + " " + std::to_string(kDecisions[j].frame) +
               " " + (kDecisions[j].obstacle ? "obstacle" : "clear") + "\n";
        state = kDecisions[j].obstacle;
      }
      return out;
    }();
    EXPECT_EQ(ReadAll(path), expected) << "after frame " << d.frame;
  }
  sink->reset();
  EXPECT_EQ(ReadAll(path), ExpectedLines());
  EXPECT_EQ(ExpectedLines(),
            "3500 2 obstacle\n5250 4 clear\n6000 5 obstacle\n9876543210 7 clear\n");
  std::filesystem::remove_all(dir);
}

TEST(AlertSinkTest, StdoutSinkWritesTheSameLinesToStandardOutput) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  std::fflush(stdout);
  const int saved = dup(STDOUT_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_GE(dup2(pipe_fds[1], STDOUT_FILENO), 0);
  {
    auto spec = ParseAlertSpec("stdout");
    ASSERT_TRUE(spec);
    auto sink = OpenAlert(*spec);
    ASSERT_TRUE(sink) << sink.error().message;
    for (const auto& d : kDecisions) ASSERT_TRUE((*sink)->Set(d.obstacle, d.frame, d.now_ns));
  }
  dup2(saved, STDOUT_FILENO);
  close(saved);
  close(pipe_fds[1]);
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0) got.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  EXPECT_EQ(got, ExpectedLines());
}

TEST(AlertSinkTest, NoneSinkAcceptsEveryDecision) {
  auto sink = OpenAlert(AlertSpec{});
  ASSERT_TRUE(sink);
  EXPECT_EQ((*sink)->Describe(), "none");
  for (const auto& d : kDecisions) EXPECT_TRUE((*sink)->Set(d.obstacle, d.frame, d.now_ns));
}

TEST(AlertSinkTest, AFileInAMissingFolderIsAUsageErrorAndNothingIsCreated) {
  const std::string dir = TempDir();
  auto spec = ParseAlertSpec("file:" + dir + "/missing/alerts.txt");
  ASSERT_TRUE(spec);
  auto sink = OpenAlert(*spec);
  ASSERT_FALSE(sink);
  EXPECT_EQ(sink.error().code, ExitCode::kUsage);
  EXPECT_NE(sink.error().message.find(dir + "/missing/alerts.txt"), std::string::npos)
      << sink.error().message;
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing"));
  std::filesystem::remove_all(dir);
}

TEST(AlertSinkTest, GpioAlertAndLoopbackWithoutALineSayWhy) {
  auto spec = ParseAlertSpec("gpio:gpiochip0:17");
  ASSERT_TRUE(spec);
  auto sink = OpenAlert(*spec);
  auto loop = OpenLoopback("gpio:gpiochip0:18");
  if (!measure::GpioCompiledIn()) {
    ASSERT_FALSE(sink);
    EXPECT_EQ(sink.error().code, ExitCode::kResource);
    EXPECT_NE(sink.error().message.find("libgpiod-dev"), std::string::npos);
    ASSERT_FALSE(loop);
    EXPECT_NE(loop.error().message.find("libgpiod-dev"), std::string::npos);
    return;
  }
  if (std::filesystem::exists("/dev/gpiochip0")) GTEST_SKIP() << "this machine has gpiochip0";
  ASSERT_FALSE(sink);
  EXPECT_EQ(sink.error().code, ExitCode::kUsage);
  EXPECT_NE(sink.error().message.find("no GPIO chip"), std::string::npos) << sink.error().message;
  ASSERT_FALSE(loop);
  EXPECT_NE(loop.error().message.find("gpio:gpiochip0:18"), std::string::npos)
      << loop.error().message;
}

/// An output line that records every level it was set to (and can be told to fail once).
class RecordingLine final : public measure::GpioOutput {
 public:
  explicit RecordingLine(std::vector<bool>& levels) : levels_(levels) {
    info_.device = "/dev/gpiochip7";
    info_.chip_label = "test-chip";
    info_.offset = 3;
    info_.line_name = "alert";
  }
  Status Set(bool high) override {
    if (fail_next) {
      fail_next = false;
      return Failure("scripted failure");
    }
    levels_.push_back(high);
    return Status::Ok();
  }
  const measure::GpioLineInfo& info() const override { return info_; }
  bool fail_next = false;

 private:
  std::vector<bool>& levels_;
  measure::GpioLineInfo info_;
};

TEST(GpioAlertTest, TheLineIsWrittenOnChangesOnlyHighForObstacle) {
  std::vector<bool> levels;
  auto line = std::make_unique<RecordingLine>(levels);
  RecordingLine* raw = line.get();
  auto sink = MakeGpioAlert(std::move(line));
  EXPECT_EQ(sink->Describe(), "gpio line 3 'alert' of /dev/gpiochip7 (test-chip), high = obstacle");
  for (const auto& d : kDecisions) ASSERT_TRUE(sink->Set(d.obstacle, d.frame, d.now_ns));
  // The changes of kDecisions from clear (the level the line was requested at).
  EXPECT_EQ(levels, (std::vector<bool>{true, false, true, false}));
  // A failed write is reported and not taken as done: the next frame writes again.
  raw->fail_next = true;
  EXPECT_FALSE(sink->Set(true, 8, 10'000'000'000));
  ASSERT_TRUE(sink->Set(true, 9, 10'100'000'000));
  EXPECT_EQ(levels, (std::vector<bool>{true, false, true, false, true}));
}

/// An edge input replaying scripted edges; nullopt (a timeout) once they are used up.
class ScriptedEdges final : public measure::GpioEdgeInput {
 public:
  explicit ScriptedEdges(std::vector<measure::GpioEdge> edges) : edges_(std::move(edges)) {
    info_.device = "/dev/gpiochip7";
    info_.chip_label = "test-chip";
    info_.offset = 4;
  }
  int fd() const override { return -1; }
  Expected<measure::GpioEdge> Read() override { return Failure("not used"); }
  Expected<std::optional<measure::GpioEdge>> Wait(int64_t timeout_ns) override {
    timeouts.push_back(timeout_ns);
    if (fail_at == next_) return Failure("scripted read failure");
    if (next_ >= edges_.size()) return std::optional<measure::GpioEdge>{};
    return std::optional<measure::GpioEdge>{edges_[next_++]};
  }
  const measure::GpioLineInfo& info() const override { return info_; }
  std::vector<int64_t> timeouts;
  size_t fail_at = SIZE_MAX;

 private:
  std::vector<measure::GpioEdge> edges_;
  size_t next_ = 0;
  measure::GpioLineInfo info_;
};

TEST(LoopbackTest, WaitEdgeReturnsTheKernelTimestampOfTheAskedEdgeAndSkipsStaleOnes) {
  auto input = std::make_unique<ScriptedEdges>(std::vector<measure::GpioEdge>{
      {100, false},  // a falling edge left from before: stale for a rising wait
      {200, true},   // the rising edge asked for
      {250, true},   // a bounce: wrong direction for the falling wait
      {150, false},  // older than the edge already used: stale
      {300, false},  // the falling edge asked for
  });
  ScriptedEdges* raw = input.get();
  auto loop = MakeGpioLoopback(std::move(input));
  EXPECT_EQ(loop->Describe(), "gpio line 4 of /dev/gpiochip7 (test-chip)");
  auto rising = loop->WaitEdge(true, 50'000'000);
  ASSERT_TRUE(rising) << rising.error().message;
  EXPECT_EQ(*rising, std::optional<int64_t>{200});
  auto falling = loop->WaitEdge(false, 50'000'000);
  ASSERT_TRUE(falling) << falling.error().message;
  EXPECT_EQ(*falling, std::optional<int64_t>{300});
  // No edge any more: a timeout, reported as such, never a guessed time.
  auto none = loop->WaitEdge(true, 1'000'000);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(none->has_value());
  // Every wait was bounded by what was left of the caller's timeout.
  for (int64_t t : raw->timeouts) {
    EXPECT_GE(t, 0);
    EXPECT_LE(t, 50'000'000);
  }
}

TEST(LoopbackTest, AReadErrorIsReturnedNotSwallowed) {
  auto input = std::make_unique<ScriptedEdges>(std::vector<measure::GpioEdge>{{100, true}});
  input->fail_at = 0;
  auto loop = MakeGpioLoopback(std::move(input));
  auto edge = loop->WaitEdge(true, 1'000'000);
  ASSERT_FALSE(edge);
  EXPECT_EQ(edge.error().message, "scripted read failure");
}

TEST(AlertSinkTest, ABadLoopbackSpecIsAUsageError) {
  auto loop = OpenLoopback("gpiochip0:18");
  ASSERT_FALSE(loop);
  EXPECT_EQ(loop.error().code, ExitCode::kUsage);
  EXPECT_NE(loop.error().message.find("--loopback"), std::string::npos) << loop.error().message;
}

}  // namespace
}  // namespace rtpulse::e2e
