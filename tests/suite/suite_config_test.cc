#include "suite/suite_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace rtpulse::suite {
namespace {

const std::vector<int> kPi5 = {0, 1, 2, 3};
constexpr int64_t kSecondNs = 1'000'000'000;

std::vector<std::string> Names(const std::vector<Scenario>& scenarios) {
  std::vector<std::string> names;
  for (const auto& s : scenarios) names.push_back(s.name);
  return names;
}

/// The CPUs each load of `s` was placed on (all loads of a default scenario share them).
std::vector<int> CpusOf(const Scenario& s) {
  std::vector<int> cpus;
  for (const auto& l : s.loads) {
    if (cpus.empty()) cpus = l.params.cpus;
    EXPECT_EQ(l.params.cpus, cpus) << s.name << ": " << l.text;
  }
  return cpus;
}

std::vector<int> Range(int first, int last) {
  std::vector<int> out;
  for (int c = first; c <= last; ++c) out.push_back(c);
  return out;
}

/// The message of a file that must fail as bad input.
std::string ErrorOf(const std::string& toml, const std::vector<int>& online = kPi5) {
  auto config = ParseSuiteToml(toml, "suite.toml", online);
  if (config) {
    ADD_FAILURE() << "parsed:\n" << toml;
    return "";
  }
  EXPECT_EQ(config.error().code, ExitCode::kUsage) << config.error().message;
  return config.error().message;
}

const std::string kIdle = "\n[[scenario]]\nname = \"idle\"\n";

// --- DefaultScenarios ---

/// The built-in scenarios, or a test failure (an unwritable /tmp makes them an error).
std::vector<Scenario> Defaults(const std::vector<int>& cpus) {
  auto s = DefaultScenarios(cpus);
  if (!s) {
    ADD_FAILURE() << s.error().message;
    return {};
  }
  return std::move(*s);
}

struct DefaultCase {
  std::vector<int> cpus;
  std::vector<int> light, moderate, heavy;
};

TEST(DefaultScenarios, ScaleToTheCpuCountFromTheEndOfTheList) {
  const std::vector<DefaultCase> cases = {
      {{0}, {0}, {0}, {0}},
      {{0, 1}, {1}, {1}, {0, 1}},
      {kPi5, {3}, {2, 3}, {1, 2, 3}},
      {Range(0, 7), {6, 7}, Range(4, 7), Range(2, 7)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.cpus.size());
    const auto scenarios = Defaults(c.cpus);
    ASSERT_EQ(Names(scenarios),
              (std::vector<std::string>{"idle", "light", "moderate", "heavy", "thermal"}));
    EXPECT_TRUE(scenarios[0].loads.empty());
    EXPECT_EQ(CpusOf(scenarios[1]), c.light);
    EXPECT_EQ(CpusOf(scenarios[2]), c.moderate);
    EXPECT_EQ(CpusOf(scenarios[3]), c.heavy);
    EXPECT_EQ(CpusOf(scenarios[4]), c.cpus);
    for (const auto& s : scenarios) {
      ASSERT_EQ(s.loads.size(), s.load_specs.size()) << s.name;
      for (size_t i = 0; i < s.loads.size(); ++i) EXPECT_EQ(s.loads[i].text, s.load_specs[i]);
      EXPECT_FALSE(s.duration_ns);
      EXPECT_FALSE(s.settle_ns);
    }
  }
}

TEST(DefaultScenarios, LoadKindsAndDescriptions) {
  const auto s = Defaults(kPi5);
  ASSERT_EQ(s.size(), 5u);
  auto kinds = [](const Scenario& sc) {
    std::vector<std::string> out;
    for (const auto& l : sc.loads) out.push_back(l.name);
    return out;
  };
  EXPECT_EQ(kinds(s[1]), (std::vector<std::string>{"cpu", "io"}));
  EXPECT_EQ(kinds(s[2]), (std::vector<std::string>{"cpu", "io"}));
  EXPECT_EQ(kinds(s[3]), (std::vector<std::string>{"cpu", "memory", "io"}));
  EXPECT_EQ(kinds(s[4]), (std::vector<std::string>{"cpu"}));
  EXPECT_EQ(s[0].description, "no load");
  EXPECT_EQ(s[1].description, "1 CPU busy + light io");
  EXPECT_EQ(s[2].description, "2 CPUs busy + medium io");
  EXPECT_EQ(s[3].description, "3 CPUs busy + memory pressure + io");
  EXPECT_EQ(s[4].description, "all 4 CPUs busy, sustained (heats the SoC)");
  EXPECT_EQ(s[1].load_specs, (std::vector<std::string>{"cpu:cpus=3", "io:cpus=3,intensity=25"}));
}

TEST(DefaultScenarios, UnsortedAndSparseCpuLists) {
  const auto s = Defaults({6, 0, 4, 2});
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(CpusOf(s[1]), std::vector<int>{6});
  EXPECT_EQ(CpusOf(s[2]), (std::vector<int>{4, 6}));
  EXPECT_EQ(CpusOf(s[4]), (std::vector<int>{0, 2, 4, 6}));
}

// --- ParseSuiteToml: the happy path ---

TEST(SuiteToml, EveryKey) {
  const std::string toml = R"(
name = "uav"
description = "flight controller"
duration = "10m"
settle = "2s"
interval = "500us"
priority = 90
wake = ["abs", "timerfd"]
monitor_interval = "250ms"

[[scenario]]
name = "idle"

[[scenario]]
name = "mix_1"
description = "cpu and net"
loads = ["cpu:cpus=3,intensity=50", "net:cpus=2,proto=tcp+switch:cpus=1"]
duration = "1h"
settle = "0s"
)";
  auto c = ParseSuiteToml(toml, "uav.toml", kPi5);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->name, "uav");
  EXPECT_EQ(c->description, "flight controller");
  EXPECT_EQ(c->source, "uav.toml");
  EXPECT_EQ(c->duration_ns, 600 * kSecondNs);
  EXPECT_EQ(c->settle_ns, 2 * kSecondNs);
  EXPECT_EQ(c->interval_ns, 500'000);
  EXPECT_EQ(c->priority, 90);
  EXPECT_EQ(c->wake,
            (std::vector<measure::WakePath>{measure::WakePath::kAbs, measure::WakePath::kTimerfd}));
  EXPECT_EQ(c->monitor_interval_ns, 250'000'000);
  ASSERT_EQ(c->scenarios.size(), 2u);

  const Scenario& idle = c->scenarios[0];
  EXPECT_EQ(idle.name, "idle");
  EXPECT_EQ(idle.description, "no load");
  EXPECT_TRUE(idle.loads.empty());
  EXPECT_FALSE(idle.duration_ns);
  EXPECT_FALSE(idle.settle_ns);

  const Scenario& mix = c->scenarios[1];
  EXPECT_EQ(mix.description, "cpu and net");
  EXPECT_EQ(mix.load_specs, (std::vector<std::string>{"cpu:cpus=3,intensity=50",
                                                      "net:cpus=2,proto=tcp", "switch:cpus=1"}));
  ASSERT_EQ(mix.loads.size(), 3u);
  EXPECT_EQ(mix.loads[0].params.cpus, std::vector<int>{3});
  EXPECT_EQ(mix.loads[0].params.intensity, 50);
  EXPECT_EQ(mix.loads[1].params.Option("proto", ""), "tcp");
  EXPECT_EQ(mix.loads[2].name, "switch");
  EXPECT_EQ(mix.duration_ns, 3600 * kSecondNs);
  EXPECT_EQ(mix.settle_ns, 0);
}

TEST(SuiteToml, DefaultsWhenOnlyScenariosAreGiven) {
  auto c = ParseSuiteToml(kIdle, "s.toml", kPi5);
  ASSERT_TRUE(c) << c.error().message;
  const SuiteConfig defaults;
  EXPECT_EQ(c->name, "default");
  EXPECT_EQ(c->duration_ns, 600 * kSecondNs);
  EXPECT_EQ(c->settle_ns, 5 * kSecondNs);
  EXPECT_EQ(c->interval_ns, 1'000'000);
  EXPECT_EQ(c->priority, 80);
  EXPECT_EQ(c->wake, defaults.wake);
  EXPECT_EQ(c->monitor_interval_ns, 5 * kSecondNs);
}

TEST(SuiteToml, WakeAsACommaList) {
  auto c = ParseSuiteToml("wake = \"abs,posix\"" + kIdle, "s.toml", kPi5);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->wake,
            (std::vector<measure::WakePath>{measure::WakePath::kAbs, measure::WakePath::kPosix}));
}

TEST(SuiteToml, LoadWithoutCpusGetsTheGivenOnlineCpus) {
  auto c = ParseSuiteToml("[[scenario]]\nname = \"all\"\nloads = [\"cpu\"]\n", "s.toml", kPi5);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->scenarios[0].loads[0].params.cpus, kPi5);
  EXPECT_EQ(c->scenarios[0].description, "cpu");
}

TEST(SuiteToml, CommandLoadTableKeepsItsArgvAsWritten) {
  auto c = ParseSuiteToml(
      "[[scenario]]\nname = \"mine\"\n"
      "loads = [{ command = [\"sh\", \"-c\", \"echo a+b; sleep 1\"], cpus = \"2-3\", "
      "instances = 2, grace = \"500ms\" }, \"cpu:cpus=1\"]\n",
      "s.toml", kPi5);
  ASSERT_TRUE(c) << c.error().message;
  const Scenario& s = c->scenarios[0];
  ASSERT_EQ(s.loads.size(), 2u);
  EXPECT_EQ(s.loads[0].name, "cmd");
  EXPECT_EQ(s.loads[0].params.args, (std::vector<std::string>{"sh", "-c", "echo a+b; sleep 1"}));
  EXPECT_EQ(s.loads[0].params.cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(s.loads[0].params.Option("instances", ""), "2");
  EXPECT_EQ(s.loads[0].params.Option("grace", ""), "500ms");
  EXPECT_EQ(s.load_specs[0], "cmd:cpus=2-3,grace=500ms,instances=2 sh -c \"echo a+b; sleep 1\"");
  EXPECT_EQ(s.load_specs[1], "cpu:cpus=1");
  // A cmd string takes the rest of the string, '+' included.
  auto joined = ParseSuiteToml(
      "[[scenario]]\nname = \"j\"\nloads = [\"cpu:cpus=1+cmd:shell=1 echo $((1+2))\"]\n", "s.toml",
      kPi5);
  ASSERT_TRUE(joined) << joined.error().message;
  ASSERT_EQ(joined->scenarios[0].loads.size(), 2u);
  EXPECT_EQ(joined->scenarios[0].loads[1].params.args.back(), "echo $((1+2))");
}

TEST(SuiteTomlErrors, BadCommandLoadTables) {
  const std::string head = "[[scenario]]\nname = \"a\"\nloads = [";
  EXPECT_EQ(ErrorOf(head + "{ cpus = \"1\" }]\n"),
            "suite.toml:3:10: a command load needs command = [\"program\", \"arg\", ...] (a "
            "non-empty list of strings)");
  EXPECT_EQ(ErrorOf(head + "{ command = [\"sh\", 3] }]\n"),
            "suite.toml:3:29: each command entry must be a string, not 3; write e.g. command = "
            "[\"python3\", \"app.py\"]");
  EXPECT_EQ(ErrorOf(head + "{ command = [\"sh\"], instance = 2 }]\n"),
            "suite.toml:3:30: unknown key 'instance' in a command load; did you mean "
            "'instances'?");
  EXPECT_EQ(ErrorOf(head + "{ command = [\"no-such-program-rtpulse\"] }]\n"),
            "suite.toml:3:10: scenario 'a': load 'cmd:no-such-program-rtpulse': program "
            "'no-such-program-rtpulse' not found in PATH; give its path or install it "
            "(docs/loads.md)");
  EXPECT_EQ(ErrorOf(head + "{ command = [\"sh\"], cpus = \"7\" }]\n"),
            "suite.toml:3:10: scenario 'a': load 'cmd:cpus=7 sh': CPU 7 is not online (online: "
            "0-3) (docs/loads.md)");
}

// --- ParseSuiteToml: errors name file:line:col, the value and the fix ---

TEST(SuiteTomlErrors, TomlSyntax) {
  const std::string e = ErrorOf("name = \"x\"\nduration = \"10m\n" + kIdle);
  // toml++'s own wording varies between versions; the position and the fix do not.
  EXPECT_EQ(e.rfind("suite.toml:2:16: ", 0), 0u) << e;
  EXPECT_NE(e.find("fix the TOML syntax"), std::string::npos) << e;
}

TEST(SuiteTomlErrors, UnknownTopLevelKeySuggestsTheClosest) {
  EXPECT_EQ(ErrorOf("name = \"x\"\nduratoin = \"10m\"\n" + kIdle),
            "suite.toml:2:1: unknown key 'duratoin'; did you mean 'duration'?");
  // Of two unknown keys, the first in the file (the table itself is sorted by key).
  EXPECT_EQ(ErrorOf("zzz = 1\nduratoin = \"10m\"\n" + kIdle),
            "suite.toml:1:1: unknown key 'zzz'; known keys: name, description, duration, settle, "
            "interval, priority, wake, monitor_interval, scenario");
}

TEST(SuiteTomlErrors, UnknownScenarioKey) {
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\n  lods = [\"cpu\"]\n"),
            "suite.toml:3:3: unknown key 'lods' in [[scenario]]; did you mean 'loads'?");
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\nzzzzzz = 1\n"),
            "suite.toml:3:1: unknown key 'zzzzzz' in [[scenario]]; known keys: name, "
            "description, loads, duration, settle");
}

TEST(SuiteTomlErrors, UnknownLoadNameKeepsParseLoadSpecsMessage) {
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\nloads = [\"cpu:cpus=3\", \"cpuu:cpus=1\"]\n"),
            "suite.toml:3:24: scenario 'a': unknown load 'cpuu'. Did you mean 'cpu'? "
            "(docs/loads.md)");
}

TEST(SuiteTomlErrors, BadLoadOption) {
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\nloads = [\"cpu:intensity=0\"]\n"),
            "suite.toml:3:10: scenario 'a': load 'cpu:intensity=0': intensity=0 is not valid; "
            "give a duty cycle from 1 to 100 (percent) (docs/loads.md)");
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\nloads = [\"cpu+\"]\n"),
            "suite.toml:3:10: empty load in \"cpu+\"; write e.g. \"cpu:cpus=3\", or "
            "\"cpu:cpus=3+io\" for two");
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\nloads = [\"cpu\", 3]\n"),
            "suite.toml:3:17: each loads entry must be a string, not 3; write e.g. loads = "
            "[\"cpu:cpus=3\", \"io\"]");
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\nloads = \"cpu\"\n"),
            "suite.toml:3:9: loads must be a list of load SPECs, not \"cpu\"; write e.g. "
            "loads = [\"cpu:cpus=3\", \"io:intensity=25\"]");
}

TEST(SuiteTomlErrors, CpuOutsideTheGivenMachine) {
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\nloads = [\"cpu:cpus=7\"]\n"),
            "suite.toml:3:10: scenario 'a': load 'cpu:cpus=7': CPU 7 is not online (online: "
            "0-3) (docs/loads.md)");
  // The same file is fine for an 8-CPU machine, whatever this machine has.
  EXPECT_TRUE(ParseSuiteToml("[[scenario]]\nname = \"a\"\nloads = [\"cpu:cpus=7\"]\n", "s.toml",
                             Range(0, 7)));
}

TEST(SuiteTomlErrors, BadDurations) {
  EXPECT_EQ(ErrorOf("duration = \"10x\"" + kIdle),
            "suite.toml:1:12: duration: invalid duration '10x': unknown unit 'x', use s, m, h or "
            "d (e.g. '30s')");
  EXPECT_EQ(ErrorOf("duration = 600" + kIdle),
            "suite.toml:1:12: duration must be a string, not 600; write e.g. duration = \"10m\"");
  EXPECT_EQ(ErrorOf("duration = \"0s\"" + kIdle),
            "suite.toml:1:12: duration \"0s\" must be above zero; write e.g. duration = \"10m\"");
  EXPECT_EQ(ErrorOf("interval = \"1\"" + kIdle),
            "suite.toml:1:12: interval: invalid time '1': give a unit ns, us, ms or s, e.g. "
            "'2ms'");
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\nsettle = \"-1s\"\n"),
            "suite.toml:3:10: settle: invalid duration '-1s': use a number with s, m, h or d, "
            "e.g. '30s' or '10m'");
}

TEST(SuiteTomlErrors, PriorityAndWake) {
  EXPECT_EQ(ErrorOf("priority = 100" + kIdle),
            "suite.toml:1:12: priority 100 is not valid; give a SCHED_FIFO priority from 1 to "
            "99, e.g. priority = 80");
  EXPECT_EQ(ErrorOf("wake = [\"abs\", \"timerdf\"]" + kIdle),
            "suite.toml:1:16: unknown wake path \"timerdf\"; did you mean \"timerfd\"? use one of "
            "abs, rel, timerfd, posix, itimer, epoll, busy, deadline, xthread");
  EXPECT_EQ(ErrorOf("wake = \"abs,abs\"" + kIdle),
            "suite.toml:1:8: wake path \"abs\" is listed twice; drop one");
  EXPECT_EQ(ErrorOf("wake = []" + kIdle),
            "suite.toml:1:8: wake is empty; write e.g. wake = [\"abs\"]");
}

TEST(SuiteTomlErrors, ScenarioNames) {
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\n[[scenario]]\nname = \"a\"\n"),
            "suite.toml:4:8: scenario name \"a\" is used twice; rename one (it names the result "
            "directory)");
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"Heavy IO\"\n"),
            "suite.toml:2:8: scenario name \"Heavy IO\" is not valid; use lower-case letters, "
            "digits, '-' and '_', starting with a letter or digit (it names a directory), at "
            "most 64 characters");
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"idle\"\n[[scenario]]\ndescription = \"x\"\n"),
            "suite.toml:3:1: [[scenario]] has no name; add e.g. name = \"idle\"");
  EXPECT_EQ(ErrorOf("[[scenario]]\nname = \"a\"\ndescription = \"two\\nlines\"\n"),
            "suite.toml:3:15: description must be one line; shorten it");
}

TEST(SuiteTomlErrors, NoScenario) {
  EXPECT_EQ(ErrorOf("name = \"x\"\n"),
            "suite.toml:1:1: the suite has no scenario; add one, e.g. [[scenario]] with name = "
            "\"idle\"");
  EXPECT_EQ(ErrorOf("name = \"x\"\nscenario = []\n"),
            "suite.toml:2:12: the scenario list is empty; add at least one [[scenario]]");
  EXPECT_EQ(ErrorOf("[scenario]\nname = \"x\"\n"),
            "suite.toml:1:1: 'scenario' must be a list of tables: write each one as [[scenario]] "
            "followed by its keys");
}

TEST(SuiteFile, UnreadableFileIsBadInput) {
  auto c = LoadSuiteFile("/nonexistent/suite.toml", kPi5);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ExitCode::kUsage);
  EXPECT_EQ(c.error().message,
            "cannot read suite file '/nonexistent/suite.toml': No such file or directory; give "
            "the path of a suite TOML file (examples in examples/suites/)");
}

// --- examples/suites ---

TEST(SuiteExamples, EveryExampleParses) {
  const std::filesystem::path dir = std::filesystem::path(RTPULSE_SOURCE_DIR) / "examples/suites";
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path().filename());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"default.toml", "network-softirq.toml",
                                             "pi5-stress-all.toml", "uav.toml"}));
  for (const auto& file : files) {
    auto c = LoadSuiteFile((dir / file).string(), kPi5);
    if (!c && c.error().code == ExitCode::kResource) {
      ADD_FAILURE() << file
                    << " needs what this machine lacks (install stress-ng): " << c.error().message;
      continue;
    }
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->name + ".toml", file) << "a suite's name matches its file name";
    EXPECT_FALSE(c->scenarios.empty());
  }
}

TEST(SuiteExamples, DefaultTomlIsTheBuiltInSuiteOnAPi5) {
  auto file =
      LoadSuiteFile(std::string(RTPULSE_SOURCE_DIR) + "/examples/suites/default.toml", kPi5);
  ASSERT_TRUE(file) << file.error().message;
  const auto defaults = DefaultSuite(kPi5);
  ASSERT_TRUE(defaults) << defaults.error().message;
  const SuiteConfig& built_in = *defaults;
  EXPECT_EQ(file->description, built_in.description);
  EXPECT_EQ(file->duration_ns, built_in.duration_ns);
  EXPECT_EQ(file->settle_ns, built_in.settle_ns);
  EXPECT_EQ(file->interval_ns, built_in.interval_ns);
  EXPECT_EQ(file->priority, built_in.priority);
  EXPECT_EQ(file->wake, built_in.wake);
  EXPECT_EQ(file->monitor_interval_ns, built_in.monitor_interval_ns);
  ASSERT_EQ(Names(file->scenarios), Names(built_in.scenarios));
  for (size_t i = 0; i < built_in.scenarios.size(); ++i) {
    EXPECT_EQ(file->scenarios[i].description, built_in.scenarios[i].description);
    EXPECT_EQ(file->scenarios[i].load_specs, built_in.scenarios[i].load_specs);
  }
}

TEST(SuiteExamples, UavStressKeepsStressNgArgumentsVerbatim) {
  auto c = LoadSuiteFile(std::string(RTPULSE_SOURCE_DIR) + "/examples/suites/uav.toml", kPi5);
  if (!c && c.error().code == ExitCode::kResource) GTEST_SKIP() << c.error().message;
  ASSERT_TRUE(c) << c.error().message;
  const Scenario& stress = c->scenarios.at(1);
  EXPECT_EQ(stress.name, "uav-stress");
  EXPECT_EQ(stress.duration_ns, 1800 * kSecondNs);
  ASSERT_EQ(stress.loads.size(), 1u);
  EXPECT_EQ(stress.loads[0].params.args.front(), "--cpu");
  EXPECT_EQ(stress.loads[0].params.args.back(), "2");
  EXPECT_EQ(stress.loads[0].params.args.size(), 18u);
}

// --- SelectScenarios ---

TEST(SelectScenarios, KeepsTheGivenOrder) {
  const auto all = Defaults(kPi5);
  ASSERT_EQ(all.size(), 5u);
  auto picked = SelectScenarios(all, "thermal, idle,light");
  ASSERT_TRUE(picked) << picked.error().message;
  EXPECT_EQ(Names(*picked), (std::vector<std::string>{"thermal", "idle", "light"}));
  EXPECT_EQ((*picked)[0].load_specs, all[4].load_specs);
}

TEST(SelectScenarios, BadListsAreUsageErrors) {
  const auto all = Defaults(kPi5);
  auto unknown = SelectScenarios(all, "idle,lihgt");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ExitCode::kUsage);
  EXPECT_EQ(unknown.error().message,
            "unknown scenario 'lihgt' in --scenarios; did you mean 'light'? the suite has idle, "
            "light, moderate, heavy, thermal");
  auto far = SelectScenarios(all, "zzzzzzzz");
  ASSERT_FALSE(far);
  EXPECT_EQ(far.error().message,
            "unknown scenario 'zzzzzzzz' in --scenarios; the suite has idle, light, moderate, "
            "heavy, thermal");
  auto twice = SelectScenarios(all, "idle,idle");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().message, "scenario 'idle' is given twice in --scenarios; drop one");
  auto empty = SelectScenarios(all, "idle,");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, ExitCode::kUsage);
  EXPECT_NE(empty.error().message.find("has an empty name"), std::string::npos);
}

TEST(SuiteNames, Validity) {
  EXPECT_TRUE(IsValidName("idle"));
  EXPECT_TRUE(IsValidName("0-uav_stress"));
  EXPECT_FALSE(IsValidName(""));
  EXPECT_FALSE(IsValidName("-x"));
  EXPECT_FALSE(IsValidName("_x"));
  EXPECT_FALSE(IsValidName("A"));
  EXPECT_FALSE(IsValidName("a/b"));
  EXPECT_FALSE(IsValidName("a.b"));
  EXPECT_FALSE(IsValidName(std::string(65, 'a')));
}

TEST(SuiteToml, BinaryBytesAreEscapedInTheError) {
  // A quoted key holding ESC (written as TOML's \u001b): the unknown-key error quotes it.
  auto c = ParseSuiteToml(kIdle + "\"b\\u001b[31m\" = 1\n", "s.toml", kPi5);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("unknown key 'b\\x1b[31m'"), std::string::npos)
      << c.error().message;
  EXPECT_EQ(c.error().message.find('\x1b'), std::string::npos) << c.error().message;
  // Raw bytes that are not UTF-8: the TOML parser's own message is escaped too.
  auto bad = ParseSuiteToml(kIdle + "description = \"\xff\x01\"\n", "s.toml", kPi5);
  ASSERT_FALSE(bad);
  for (const char ch : bad.error().message) {
    const auto u = static_cast<unsigned char>(ch);
    EXPECT_TRUE(u >= 0x20 && u < 0x7f)
        << "raw byte " << static_cast<int>(u) << " in " << bad.error().message;
  }
}

}  // namespace
}  // namespace rtpulse::suite
