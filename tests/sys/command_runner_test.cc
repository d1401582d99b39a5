// The real CommandRunner: PATH lookup, output capture, exit codes, timeouts.

#include "sys/command_runner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "support/subprocess.h"

namespace rtpulse::sys {
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
  EXPECT_FALSE(runner.Run({}, 1s).has_value());
}

TEST(CommandRunnerTest, KilledBySignal) {
  const SystemCommandRunner runner;
  const auto out = runner.Run({"/bin/sh", "-c", "kill -TERM $$"}, 5s);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->exit_code, 128 + 15);
}

}  // namespace
}  // namespace rtpulse::sys
