// The real CommandRunner: PATH lookup (or its own search path), output capture, exit codes,
// timeouts, and RunForStdout's error messages.

#include "core/command_runner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/clock.h"
#include "support/subprocess.h"

namespace rtpulse {
namespace {

using namespace std::chrono_literals;

/// Sets PATH for the test's lifetime.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    const char* old = std::getenv("PATH");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() {
    if (had_) {
      setenv("PATH", old_.c_str(), 1);
    } else {
      unsetenv("PATH");
    }
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};

void WriteScript(const std::string& path, const std::string& body, mode_t mode = 0755) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  chmod(path.c_str(), mode);
}

TEST(CommandRunnerTest, FindsTheFirstExecutableOnPath) {
  testutil::TempDir first;
  testutil::TempDir second;
  WriteScript(first.File("tool"), "echo first\n", 0644);  // not executable: skipped
  WriteScript(second.File("tool"), "echo second\n");
  WriteScript(first.File("other"), "echo other\n");
  const ScopedPath path(first.path() + ":" + second.path());
  const SystemCommandRunner runner;
  EXPECT_EQ(runner.Find("tool"), second.File("tool"));
  EXPECT_EQ(runner.Find("other"), first.File("other"));
  EXPECT_EQ(runner.Find("absent-program"), "");
  EXPECT_EQ(runner.Find(""), "");
  EXPECT_EQ(runner.Find(second.File("tool")), second.File("tool")) << "a path is used as is";
  EXPECT_EQ(runner.Find(first.File("tool")), "");
}

TEST(CommandRunnerTest, CapturesStdoutStderrAndExitCode) {
  testutil::TempDir bin;
  WriteScript(bin.File("vcgencmd"), "echo \"throttled=0x50005\"\necho oops >&2\nexit 3\n");
  const ScopedPath path(bin.path());
  const SystemCommandRunner runner;
  const auto out = runner.Run({"vcgencmd", "get_throttled"}, 5s);
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->out, "throttled=0x50005\n");
  EXPECT_EQ(out->err, "oops\n");
  EXPECT_EQ(out->exit_code, 3);
  EXPECT_FALSE(out->timed_out);
}

TEST(CommandRunnerTest, PassesArgumentsAndGivesAnEmptyStdin) {
  const SystemCommandRunner runner;
  const auto out = runner.Run({"/bin/sh", "-c", "echo \"$1|$2\"; cat", "sh", "a b", "c"}, 5s);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->out, "a b|c\n") << "cat must see end of file at once";
  EXPECT_EQ(out->exit_code, 0);
}

TEST(CommandRunnerTest, KillsAProgramThatOutlivesTheTimeout) {
  const SystemCommandRunner runner;
  const auto start = std::chrono::steady_clock::now();
  // The grandchild (sleep) holds the pipe open too: the whole group must go.
  const auto out = runner.Run({"/bin/sh", "-c", "echo started; sleep 30; echo never"}, 300ms);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->timed_out);
  EXPECT_EQ(out->exit_code, -1);
  EXPECT_EQ(out->out, "started\n");
  EXPECT_LT(took, 5s);
}

TEST(CommandRunnerTest, AProgramThatClosesItsOutputButKeepsRunningTimesOut) {
  const SystemCommandRunner runner;
  const auto start = std::chrono::steady_clock::now();
  const auto out = runner.Run({"/bin/sh", "-c", "exec >&- 2>&-; sleep 30"}, 300ms);
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(CommandRunnerTest, MissingProgramIsAnError) {
  const ScopedPath path("/nonexistent");
  const SystemCommandRunner runner;
  const auto out = runner.Run({"vcgencmd", "get_throttled"}, 1s);
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().message.find("'vcgencmd' not found on PATH"), std::string::npos);
  EXPECT_EQ(out.error().code, ExitCode::kResource);
  EXPECT_FALSE(runner.Run({}, 1s).has_value());
}

TEST(CommandRunnerTest, KilledBySignal) {
  const SystemCommandRunner runner;
  const auto out = runner.Run({"/bin/sh", "-c", "kill -TERM $$"}, 5s);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->exit_code, 128 + 15);
  EXPECT_EQ(out->term_signal, 15);
  const auto exited = runner.Run({"/bin/sh", "-c", "exit 143"}, 5s);
  ASSERT_TRUE(exited.has_value());
  EXPECT_EQ(exited->exit_code, 143);
  EXPECT_EQ(exited->term_signal, 0) << "an exit status is not a signal";
}

// From the monitor's former ProcessRunner: a runner with its own search path, and
// RunForStdout, which vcgencmd readings go through.
class SearchPathRunnerTest : public ::testing::Test {
 protected:
  void Script(const std::string& name, const std::string& body) {
    const std::string path = dir_.File(name);
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  }
  testutil::TempDir dir_;
};

TEST_F(SearchPathRunnerTest, FindsOnItsSearchPathOnly) {
  Script("vcgencmd", "echo hi");
  const ScopedPath path("/nonexistent");  // $PATH is not searched when a path is given
  const SystemCommandRunner runner("/nonexistent:" + dir_.path());
  EXPECT_EQ(runner.Find("vcgencmd"), dir_.File("vcgencmd"));
  EXPECT_EQ(runner.Find("no-such-program-here"), "");
  auto out = RunForStdout(runner, {"vcgencmd", "measure_volts", "core"}, 2s);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, "hi\n");
}

TEST_F(SearchPathRunnerTest, PassesArguments) {
  Script("echoargs", "echo \"$1|$2\"");
  const SystemCommandRunner runner(dir_.path());
  auto out = RunForStdout(runner, {"echoargs", "measure_volts", "core"}, 2s);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, "measure_volts|core\n");
}

TEST_F(SearchPathRunnerTest, NotFoundFailingAndTimedOut) {
  Script("fails", "echo 'error=1 error_msg=\"Command not registered\"'; exit 255");
  Script("hangs", "exec sleep 30");
  Script("killed", "kill -KILL $$");
  const SystemCommandRunner runner(dir_.path());
  auto missing = RunForStdout(runner, {"vcgencmd"}, 200ms);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "'vcgencmd' not found on PATH");
  EXPECT_EQ(missing.error().code, ExitCode::kResource);
  auto failed = RunForStdout(runner, {"fails", "pmic_read_adc"}, 200ms);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message,
            "'fails pmic_read_adc' failed (exit status 255): error=1 error_msg=\"Command not "
            "registered\"");
  auto killed = RunForStdout(runner, {"killed"}, 2s);
  ASSERT_FALSE(killed);
  EXPECT_EQ(killed.error().message, "'killed' failed (killed by signal 9)");
  const int64_t start = MonotonicNs();
  auto hung = RunForStdout(runner, {"hangs"}, 200ms);
  const int64_t took = MonotonicNs() - start;
  ASSERT_FALSE(hung);
  EXPECT_EQ(hung.error().message, "'hangs' timed out after 200 ms");
  EXPECT_LT(took, 5 * kNsPerSec);
}

}  // namespace
}  // namespace rtpulse
