// Runs the real `rtpulse check` binary against the fixture trees in tests/data/sysroots and
// compares its reports with tests/data/golden/check exactly (RTPULSE_UPDATE_GOLDEN=1 rewrites
// them; see tests/data/golden/check/README.md for the two normalisations applied).

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/gzip.h"
#include "core/version.h"
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "sys/check.h"

extern char** environ;

namespace rtpulse {
namespace {

namespace fs = std::filesystem;
using testutil::ProcessOptions;
using testutil::ProcessResult;
using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::TempDir;

constexpr const char* kRoot = "euid=0,cap_eff=0x1ffffffffff,memlock=8388608:8388608,rtprio=0:0";
constexpr const char* kPiUser = "euid=1000,cap_eff=0x0,memlock=8388608:8388608,rtprio=0:0";
constexpr const char* kRealtimeGroup =
    "euid=1000,cap_eff=0x0,memlock=unlimited:unlimited,rtprio=95:95";

struct Fixture {
  const char* name;
  const char* process;  ///< RTPULSE_CHECK_PROCESS for the golden run.
  int strict_exit;      ///< Exit code with --strict (1 when a check fails).
};

constexpr Fixture kFixtures[] = {
    {"pi5-rt-tuned", kRoot, 0},
    {"pi5-stock", kPiUser, 1},
    {"pi4-rt-patched", kRealtimeGroup, 1},
    {"x86-vm", kRoot, 0},
};

void PrintTo(const Fixture& f, std::ostream* os) {
  *os << f.name;
}

/// A fixture tree copied to a temporary folder, with every FILE.gz.txt gzipped into FILE.gz
/// (the committed text stays reviewable; the binary reads real gzip, as on a Pi).
class Sysroot {
 public:
  explicit Sysroot(const std::string& name) {
    const fs::path source = fs::path(RTPULSE_TEST_DATA) / "sysroots" / name;
    if (!fs::is_directory(source)) std::abort();
    fs::copy(source, path(), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    for (const auto& entry : fs::recursive_directory_iterator(path())) {
      const std::string file = entry.path().string();
      if (!entry.is_regular_file() || !file.ends_with(".gz.txt")) continue;
      std::ofstream(file.substr(0, file.size() - 4), std::ios::binary) << *Gzip(ReadFile(file));
      fs::remove(entry.path());
    }
  }
  const std::string& path() const { return dir_.path(); }

  /// The environment of a run against this tree: its files, its bin/ alone on PATH (so the
  /// host's own stress-ng or vcgencmd cannot leak in), and the given process facts.
  std::vector<std::string> Env(const std::string& process) const {
    std::vector<std::string> env = {"RTPULSE_SYSROOT=" + path(), "PATH=" + path() + "/bin",
                                    "NO_COLOR"};
    env.push_back(process.empty() ? "RTPULSE_CHECK_PROCESS" : "RTPULSE_CHECK_PROCESS=" + process);
    return env;
  }

 private:
  TempDir dir_;
};

ProcessResult RunCheck(const Sysroot& root, const std::string& process,
                       const std::vector<std::string>& args, ProcessOptions options = {}) {
  std::vector<std::string> argv = {"check"};
  argv.insert(argv.end(), args.begin(), args.end());
  options.extra_env = root.Env(process);
  return RunRtpulse(argv, options);
}

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size()) {
    text.replace(pos, from.size(), to);
  }
}

/// The two run-dependent strings: the temporary fixture folder and the rtpulse version.
std::string Normalise(std::string text, const Sysroot& root) {
  ReplaceAll(text, root.path(), "$SYSROOT");
  ReplaceAll(text, fmt::format("\"rtpulse_version\": \"{}\"", kVersion),
             "\"rtpulse_version\": \"<version>\"");
  return text;
}

size_t CountLines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

class GoldenTest : public ::testing::TestWithParam<std::tuple<Fixture, bool>> {};

TEST_P(GoldenTest, ReportMatchesTheGoldenFile) {
  const auto& [fixture, json] = GetParam();
  const Sysroot root(fixture.name);
  const auto run = RunCheck(root, fixture.process,
                            json ? std::vector<std::string>{"--json"} : std::vector<std::string>{});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  const std::string actual = Normalise(run.out, root);
  const std::string golden =
      fmt::format("{}/golden/check/{}.{}", RTPULSE_TEST_DATA, fixture.name, json ? "json" : "txt");
  const char* update = std::getenv("RTPULSE_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    std::ofstream(golden, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << golden << ": review the diff before committing";
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with RTPULSE_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, ReadFile(golden)) << "differs from " << golden;
  EXPECT_EQ(actual.find("\033["), std::string::npos) << "colour on a pipe";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest,
                         ::testing::Combine(::testing::ValuesIn(kFixtures), ::testing::Bool()),
                         [](const auto& param_info) {
                           std::string name = std::get<0>(param_info.param).name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name + (std::get<1>(param_info.param) ? "_json" : "_text");
                         });

class StrictTest : public ::testing::TestWithParam<Fixture> {};

TEST_P(StrictTest, StrictExitsOneOnlyWhenACheckFails) {
  const Sysroot root(GetParam().name);
  const auto relaxed = RunCheck(root, GetParam().process, {});
  EXPECT_EQ(relaxed.exit_code, 0) << "failures alone do not change the exit code";
  const auto strict = RunCheck(root, GetParam().process, {"--strict", "--json"});
  EXPECT_EQ(strict.exit_code, GetParam().strict_exit);
  const auto doc = nlohmann::json::parse(strict.out);
  EXPECT_EQ(doc["summary"]["fail"].get<int>() > 0, GetParam().strict_exit == 1);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, StrictTest, ::testing::ValuesIn(kFixtures),
                         [](const auto& param_info) {
                           std::string name = param_info.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(CheckCliTest, JsonDocumentListsEveryCheckOnceWithAConsistentSummary) {
  const Sysroot root("pi4-rt-patched");
  const auto run = RunCheck(root, kRealtimeGroup, {"--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["schema"], "rtpulse.check");
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["rtpulse_version"], kVersion);
  EXPECT_TRUE(doc["system"]["from_sysroot"].get<bool>());
  EXPECT_TRUE(doc["process"]["injected"].get<bool>());
  const auto registry = sys::AllChecks();
  ASSERT_EQ(doc["checks"].size(), registry.size());
  std::map<std::string, int> counts;
  for (size_t i = 0; i < registry.size(); ++i) {
    const auto& c = doc["checks"][i];
    EXPECT_EQ(c["id"], registry[i].id);
    for (const char* key : {"area", "title", "status", "found", "why", "fix", "scope"}) {
      EXPECT_TRUE(c.contains(key)) << c["id"] << " lacks " << key;
    }
    ++counts[c["status"].get<std::string>()];
  }
  for (const char* status : {"pass", "warn", "fail", "info"}) {
    EXPECT_EQ(doc["summary"][status].get<int>(), counts[status]) << status;
  }
  EXPECT_EQ(doc["summary"]["total"].get<size_t>(), registry.size());
}

TEST(CheckCliTest, JsonFileIsWrittenAtomicallyAndTheTextReportStillPrinted) {
  const Sysroot root("x86-vm");
  TempDir out;
  const auto to_file = RunCheck(root, kRoot, {"--json", out.File("check.json")});
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_EQ(to_file.out.rfind("rtpulse check: x86-vm, Linux", 0), 0u) << to_file.out;
  const auto to_stdout = RunCheck(root, kRoot, {"--json", "-"});
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_EQ(ReadFile(out.File("check.json")), to_stdout.out);
  EXPECT_EQ(out.List(), std::vector<std::string>{"check.json"}) << "temporary file left behind";
}

TEST(CheckCliTest, BadUsageIsOneLineAndExitTwo) {
  const Sysroot root("x86-vm");
  struct Case {
    std::vector<std::string> args;
    std::string process;
    std::string must_mention;
  };
  const std::vector<Case> cases = {
      {{"--bogus"}, kRoot, "--bogus"},
      {{"extra"}, kRoot, "extra"},
      {{"--json", "/nonexistent/dir/check.json"}, kRoot, "/nonexistent/dir"},
      {{}, "euid=0", "RTPULSE_CHECK_PROCESS"},
      {{}, "euid=0,cap_eff=zz,memlock=1:1,rtprio=0:0", "zz"},
  };
  for (const auto& c : cases) {
    const auto run = RunCheck(root, c.process, c.args);
    EXPECT_EQ(run.exit_code, 2) << c.must_mention << ": " << run.err;
    EXPECT_EQ(CountLines(run.err), 1u) << run.err;
    EXPECT_EQ(run.err.rfind("rtpulse: error: ", 0), 0u) << run.err;
    EXPECT_NE(run.err.find(c.must_mention), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "") << "nothing is reported on bad usage";
  }
}

TEST(CheckCliTest, HelpDescribesOptionsAndTheCommandIsListed) {
  const auto help = RunRtpulse({"check", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* part : {"--json", "--strict", "--verbose", "RTPULSE_SYSROOT", "NO_COLOR"}) {
    EXPECT_NE(help.out.find(part), std::string::npos) << part;
  }
  const auto top = RunRtpulse({"--help"});
  EXPECT_NE(top.out.find("check"), std::string::npos);
  const auto typo = RunRtpulse({"chek"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("Did you mean 'check'?"), std::string::npos) << typo.err;
}

TEST(CheckCliTest, VerboseExplainsPassesToo) {
  const Sysroot root("pi5-rt-tuned");
  const auto quiet = RunCheck(root, kRoot, {});
  const auto verbose = RunCheck(root, kRoot, {"-v"});
  ASSERT_EQ(verbose.exit_code, 0);
  const auto whys = [](const std::string& text) {
    size_t n = 0;
    for (size_t pos = 0; (pos = text.find("        why: ", pos)) != std::string::npos; ++pos) ++n;
    return n;
  };
  EXPECT_EQ(whys(quiet.out), 0u) << "a fully tuned board has nothing to explain";
  EXPECT_EQ(whys(verbose.out), sys::AllChecks().size());
}

TEST(CheckCliTest, ProcessFactsComeFromTheRealProcessWithoutInjection) {
  const Sysroot root("x86-vm");
  const auto run = RunCheck(root, "", {"--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_FALSE(doc["process"]["injected"].get<bool>());
  EXPECT_EQ(doc["process"]["euid"].get<unsigned>(), geteuid());
  rlimit memlock{};
  ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &memlock), 0);
  if (memlock.rlim_cur == RLIM_INFINITY) {
    EXPECT_TRUE(doc["process"]["memlock_soft_bytes"].is_null());
  } else {
    EXPECT_EQ(doc["process"]["memlock_soft_bytes"].get<uint64_t>(), memlock.rlim_cur);
  }
  for (const auto& c : doc["checks"]) {
    EXPECT_EQ(c["scope"] == "process", c["area"] == "process") << c["id"];
    EXPECT_EQ(c["found"].get<std::string>().find("RTPULSE_CHECK_PROCESS"), std::string::npos);
  }
}

TEST(CheckCliTest, AnUnprivilegedUserIsToldHowToGetRealTimePriority) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root to run the binary as nobody";
  const Sysroot root("x86-vm");
  ProcessOptions options;
  options.run_as_uid = 65534;
  const auto run = RunCheck(root, "", {"--json"}, options);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["process"]["euid"], 65534);
  EXPECT_EQ(doc["process"]["cap_effective"], "0x0");
  rlimit rtprio{};
  ASSERT_EQ(getrlimit(RLIMIT_RTPRIO, &rtprio), 0);
  const bool limit_allows = rtprio.rlim_cur == RLIM_INFINITY || rtprio.rlim_cur >= 80;
  for (const auto& c : doc["checks"]) {
    if (c["id"] != "process.privileges") continue;
    EXPECT_EQ(c["status"], limit_allows ? "pass" : "warn") << c["found"];
    if (!limit_allows) {
      EXPECT_NE(c["fix"].get<std::string>().find("setcap"), std::string::npos);
    }
  }
}

/// Runs rtpulse with its stdout on a pseudo-terminal; returns what it printed there.
std::string RunOnTerminal(const Sysroot& root, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) env_storage.emplace_back(*e);
  auto overrides = root.Env(kRoot);
  overrides.insert(overrides.end(), extra_env.begin(), extra_env.end());
  for (const auto& e : overrides) {
    const std::string name = e.substr(0, e.find('='));
    std::erase_if(env_storage, [&](const std::string& have) {
      return have.compare(0, name.size() + 1, name + "=") == 0;
    });
    if (e.find('=') != std::string::npos) env_storage.push_back(e);
  }
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string binary = RTPULSE_BINARY;
  std::string command = "check";
  char* argv[] = {binary.data(), command.data(), nullptr};
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return "forkpty failed";
  if (pid == 0) {
    execve(argv[0], argv, envp.data());
    _exit(127);
  }
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = read(master, buf, sizeof(buf));
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child has closed the terminal
    }
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

TEST(CheckCliTest, ColourOnATerminalUnlessNoColor) {
  const Sysroot root("pi5-stock");
  const std::string coloured = RunOnTerminal(root, {"TERM=xterm"});
  EXPECT_NE(coloured.find("\033[1;31mfail\033[0m"), std::string::npos) << coloured;
  EXPECT_NE(coloured.find("\033[32mpass\033[0m"), std::string::npos);
  const std::string plain = RunOnTerminal(root, {"TERM=xterm", "NO_COLOR=1"});
  EXPECT_NE(plain.find("fail  Firmware throttling"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("\033["), std::string::npos);
  const std::string dumb = RunOnTerminal(root, {"TERM=dumb"});
  EXPECT_EQ(dumb.find("\033["), std::string::npos);
}

}  // namespace
}  // namespace rtpulse

namespace rtpulse {
namespace {

/// "tracing" of a check JSON report as name -> (present, detail).
std::map<std::string, std::pair<bool, std::string>> CheckTracing(const std::string& out) {
  std::map<std::string, std::pair<bool, std::string>> tracing;
  const auto doc = nlohmann::json::parse(out);
  for (const auto& f : doc["tracing"]) {
    tracing[f["name"]] = {f["present"].get<bool>(), f["detail"].get<std::string>()};
  }
  return tracing;
}

TEST(CheckCliTest, TracingSectionFromAFixtureTracefsWithTimerlat) {
  const Sysroot root("x86-vm");
  const std::string t = root.path() + "/sys/kernel/tracing";
  fs::create_directories(t + "/instances");
  fs::create_directories(t + "/osnoise/per_cpu/cpu0");
  fs::create_directories(t + "/events/sched/sched_switch");
  std::ofstream(t + "/tracing_on") << "1\n";
  std::ofstream(t + "/trace_clock") << "[local] global counter uptime perf mono mono_raw boot\n";
  std::ofstream(t + "/available_tracers") << "timerlat osnoise nop\n";
  std::ofstream(t + "/osnoise/per_cpu/cpu0/timerlat_fd");
  const auto run = RunCheck(root, kRoot, {"--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto tracing = CheckTracing(run.out);
  ASSERT_EQ(tracing.size(), 14U) << run.out;
  EXPECT_TRUE(tracing["permission"].first);  // from RTPULSE_CHECK_PROCESS, not this process
  EXPECT_TRUE(tracing["tracefs"].first) << tracing["tracefs"].second;
  EXPECT_TRUE(tracing["trace_clock mono"].first) << tracing["trace_clock mono"].second;
  EXPECT_TRUE(tracing["timerlat tracer"].first) << tracing["timerlat tracer"].second;
  EXPECT_TRUE(tracing["osnoise tracer"].first);
  EXPECT_TRUE(tracing["timerlat user-space interface"].first);
  EXPECT_NE(tracing["timerlat user-space interface"].second.find("timerlat_fd"), std::string::npos);
  // Event groups with no events folder say so instead of passing.
  EXPECT_FALSE(tracing["irq events"].first);
  EXPECT_FALSE(tracing["irq events"].second.empty());
  // The text report has the same section, before the closing count.
  const auto text = RunCheck(root, kRoot, {});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const size_t section = text.out.find("\nTracing (--explain, --wake timerlat)\n");
  ASSERT_NE(section, std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  yes   timerlat tracer: in available_tracers\n", section),
            std::string::npos);
  EXPECT_LT(section, text.out.rfind(" checks: "));
  // Unprivileged, per the audited process.
  auto user = CheckTracing(RunCheck(root, kPiUser, {"--json"}).out);
  EXPECT_FALSE(user["permission"].first);
  EXPECT_NE(user["permission"].second.find("root"), std::string::npos);
}

TEST(CheckCliTest, TracingSectionOnThisMachine) {
  std::ifstream tracers_file("/sys/kernel/tracing/available_tracers");
  std::string tracers;
  if (!std::getline(tracers_file, tracers)) GTEST_SKIP() << "no readable tracefs here";
  ProcessOptions options;
  options.extra_env = {"RTPULSE_SYSROOT", "RTPULSE_CHECK_PROCESS"};
  const auto run = RunRtpulse({"check", "--json"}, options);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto tracing = CheckTracing(run.out);
  ASSERT_EQ(tracing.size(), 14U) << run.out;
  EXPECT_TRUE(tracing["tracefs"].first) << tracing["tracefs"].second;
  const bool has_timerlat = (" " + tracers + " ").find(" timerlat ") != std::string::npos;
  EXPECT_EQ(tracing["timerlat tracer"].first, has_timerlat);
  if (!has_timerlat) {
    EXPECT_NE(tracing["timerlat tracer"].second.find("CONFIG_TIMERLAT_TRACER"), std::string::npos)
        << tracing["timerlat tracer"].second;
    EXPECT_FALSE(tracing["timerlat user-space interface"].first);
  }
}

}  // namespace
}  // namespace rtpulse
