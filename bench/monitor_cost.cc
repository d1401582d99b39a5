// What does the monitor cost? The real Sampler with DefaultSources on this machine's /sys and
// /proc, plus a vcgencmd (by default a copy of the tests' fake script) so the subprocess path
// is costed too. Cost = CPU time per sample (the sampling thread's plus its children's, i.e.
// every vcgencmd and whatever it runs) / the interval, in % of one CPU. The scenario-suite
// target: <= 0.5 % at the default 5 s interval. See bench/README.md; `--help` for the options.

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/exit_code.h"
#include "core/fs_root.h"
#include "core/parse.h"
#include "monitor/sampler.h"
#include "monitor/sources.h"

namespace rtpulse {
namespace {

constexpr int kTargetMissed = 4;  // Measured, and the monitor costs more than the target.

constexpr const char* kHelp = R"(usage: monitor_cost [options]

Measures the CPU time of the rtpulse monitor's sampling (Sampler + DefaultSources on this
machine's /sys and /proc, plus vcgencmd) and prints it in % of one CPU at the interval.

  --interval T       the interval the cost is quoted at (default 5s, rtpulse's default)
  --calls N          direct SampleOnce() calls per configuration (default 20)
  --thread-interval T  interval of the sampling-thread run (default 100ms)
  --thread-time T    length of the sampling-thread run (default 3s)
  --vcgencmd-dir D   folder holding the vcgencmd to run (default: a temporary copy of
                     tests/data/fake-vcgencmd, a shell script; see bench/README.md)
  --real-vcgencmd    use the vcgencmd on $PATH (a Raspberry Pi)
  --no-vcgencmd      cost the /sys and /proc sources only
  --target P         the cost to stay under, in % of one CPU (default 0.5)
  -h, --help         this text

Exit codes: 0 target met, 4 measured but above the target, 1 a run failed,
2 bad usage, 3 the vcgencmd folder is missing.
)";

enum class Vcgencmd { kFake, kFolder, kPath, kNone };

struct Options {
  int64_t interval_ns = 5 * kNsPerSec;
  int calls = 20;
  int64_t thread_interval_ns = 100 * kNsPerMs;
  int64_t thread_time_ns = 3 * kNsPerSec;
  Vcgencmd vcgencmd = Vcgencmd::kFake;
  std::string vcgencmd_dir = RTPULSE_FAKE_VCGENCMD_DIR;
  double target_percent = 0.5;
};

[[noreturn]] void Usage(const std::string& message) {
  std::fprintf(stderr, "error: %s (see --help)\n", message.c_str());
  std::exit(ToInt(ExitCode::kUsage));
}

int64_t TimeArg(std::string_view text, std::string_view what) {
  auto ns = ParseTimeNs(text, kNsPerSec);
  if (!ns || *ns < kNsPerMs) Usage(std::string(what) + " must be a time of at least 1ms, e.g. 5s");
  return *ns;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    }
    if (arg == "--real-vcgencmd") {
      o.vcgencmd = Vcgencmd::kPath;
      continue;
    }
    if (arg == "--no-vcgencmd") {
      o.vcgencmd = Vcgencmd::kNone;
      continue;
    }
    if (i + 1 >= argc) Usage("unknown option or missing value: '" + std::string(arg) + "'");
    const std::string value = argv[++i];
    if (arg == "--interval") {
      o.interval_ns = TimeArg(value, arg);
    } else if (arg == "--thread-interval") {
      o.thread_interval_ns = TimeArg(value, arg);
    } else if (arg == "--thread-time") {
      o.thread_time_ns = TimeArg(value, arg);
    } else if (arg == "--calls") {
      auto n = ParseInt(value, "--calls");
      if (!n || *n < 1 || *n > 100000) Usage("--calls must be in [1, 100000], got '" + value + "'");
      o.calls = static_cast<int>(*n);
    } else if (arg == "--vcgencmd-dir") {
      o.vcgencmd = Vcgencmd::kFolder;
      o.vcgencmd_dir = value;
    } else if (arg == "--target") {
      char* end = nullptr;
      o.target_percent = std::strtod(value.c_str(), &end);
      if (end != value.c_str() + value.size() || !(o.target_percent > 0)) {
        Usage("--target must be a percentage such as 0.5, got '" + value + "'");
      }
    } else {
      Usage("unknown option '" + std::string(arg) + "'");
    }
  }
  return o;
}

/// A temporary folder, removed at the end: the CSV logs and the fake vcgencmd (which writes
/// its call counter beside itself, so it must not run from the source tree).
class TempDir {
 public:
  TempDir() {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/monitor_cost.XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

int64_t ChildrenCpuNs() {
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  const auto us = [](const timeval& tv) { return int64_t{tv.tv_sec} * 1'000'000 + tv.tv_usec; };
  return (us(ru.ru_utime) + us(ru.ru_stime)) * 1000;
}

/// CPU time spent per sample, split by who spent it.
struct Cost {
  uint64_t samples = 0;
  double self_us = 0;      ///< The sampling thread (reads, parsing, CSV row, spawning).
  double children_us = 0;  ///< vcgencmd processes and their own children, once reaped.
  double wall_us = 0;
  double total_us() const { return self_us + children_us; }
};

double Percent(const Cost& c, int64_t interval_ns) {
  return c.total_us() * 1e3 / static_cast<double>(interval_ns) * 100;
}

Expected<std::unique_ptr<monitor::Sampler>> OpenSampler(const std::string& csv, int64_t interval_ns,
                                                        const CommandRunner& runner) {
  monitor::SamplerOptions options;
  options.interval_ns = interval_ns;
  return monitor::Sampler::Open(csv, options, monitor::DefaultSources(FsRoot::System(), runner));
}

/// `calls` back-to-back SampleOnce() on this thread: CLOCK_THREAD_CPUTIME_ID and the reaped
/// children's time around them.
Cost DirectCalls(monitor::Sampler& sampler, int calls) {
  const int64_t cpu0 = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  const int64_t children0 = ChildrenCpuNs();
  const int64_t wall0 = MonotonicNs();
  for (int i = 0; i < calls; ++i) (void)sampler.SampleOnce();
  Cost c;
  c.samples = static_cast<uint64_t>(calls);
  const auto n = static_cast<double>(calls);
  c.self_us = static_cast<double>(ClockNs(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e3 / n;
  c.children_us = static_cast<double>(ChildrenCpuNs() - children0) / 1e3 / n;
  c.wall_us = static_cast<double>(MonotonicNs() - wall0) / 1e3 / n;
  return c;
}

/// The sampler's own thread (SCHED_IDLE, fixed grid) for `time_ns` at `interval_ns`. Its CPU
/// time is the process's minus this (sleeping) thread's, so nothing else may run meanwhile.
Cost ThreadRun(monitor::Sampler& sampler, int64_t time_ns) {
  const int64_t process0 = ClockNs(CLOCK_PROCESS_CPUTIME_ID);
  const int64_t main0 = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  const int64_t children0 = ChildrenCpuNs();
  sampler.Start();
  std::this_thread::sleep_for(std::chrono::nanoseconds(time_ns));
  (void)sampler.Stop();
  Cost c;
  c.samples = sampler.rows();
  const auto n = static_cast<double>(std::max<uint64_t>(1, c.samples));
  const int64_t sampler_ns =
      (ClockNs(CLOCK_PROCESS_CPUTIME_ID) - process0) - (ClockNs(CLOCK_THREAD_CPUTIME_ID) - main0);
  c.self_us = static_cast<double>(sampler_ns) / 1e3 / n;
  c.children_us = static_cast<double>(ChildrenCpuNs() - children0) / 1e3 / n;
  c.wall_us = -1;  // the thread sleeps between samples: no per-sample wall time
  return c;
}

/// The floor for any vcgencmd: what SystemCommandRunner's spawn of a do-nothing binary costs, three
/// times (the source's three calls per sample), counted like DirectCalls.
Cost SpawnFloor(int calls) {
  const SystemCommandRunner runner;
  const int64_t cpu0 = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  const int64_t children0 = ChildrenCpuNs();
  const int64_t wall0 = MonotonicNs();
  for (int i = 0; i < 3 * calls; ++i) (void)runner.Run({"/bin/true"}, monitor::kVcgencmdTimeout);
  Cost c;
  c.samples = static_cast<uint64_t>(calls);
  const auto n = static_cast<double>(calls);
  c.self_us = static_cast<double>(ClockNs(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e3 / n;
  c.children_us = static_cast<double>(ChildrenCpuNs() - children0) / 1e3 / n;
  c.wall_us = static_cast<double>(MonotonicNs() - wall0) / 1e3 / n;
  return c;
}

/// A negative `wall_us` prints as "-".
void PrintRow(const char* what, const Cost& c, int64_t interval_ns) {
  char wall[16] = "-";
  if (c.wall_us >= 0) std::snprintf(wall, sizeof wall, "%.0f", c.wall_us);
  std::printf("%-34s %7llu %10.0f %10.0f %10.0f %10s %9.4f%%\n", what,
              static_cast<unsigned long long>(c.samples), c.self_us, c.children_us, c.total_us(),
              wall, Percent(c, interval_ns));
}

/// Where the vcgencmd source looks: a fresh copy of the fake, a given folder, $PATH, or an
/// empty folder (not found: the source drops its columns with a note).
std::string SearchPath(const Options& o, const std::string& tmp) {
  namespace fs = std::filesystem;
  switch (o.vcgencmd) {
    case Vcgencmd::kFake:
      fs::copy(o.vcgencmd_dir, tmp + "/bin", fs::copy_options::recursive);
      return tmp + "/bin";
    case Vcgencmd::kFolder:
      return o.vcgencmd_dir;
    case Vcgencmd::kPath:
      return "";  // SystemCommandRunner: "" means $PATH
    case Vcgencmd::kNone:
      break;
  }
  fs::create_directory(tmp + "/empty");
  return tmp + "/empty";
}

int Run(const Options& o) {
  if (o.vcgencmd == Vcgencmd::kFake || o.vcgencmd == Vcgencmd::kFolder) {
    if (access((o.vcgencmd_dir + "/vcgencmd").c_str(), X_OK) != 0) {
      std::fprintf(stderr,
                   "error: no executable vcgencmd in '%s'; pass --vcgencmd-dir or "
                   "--no-vcgencmd\n",
                   o.vcgencmd_dir.c_str());
      return ToInt(ExitCode::kResource);
    }
  }
  TempDir tmp;
  if (tmp.path().empty()) {
    std::fprintf(stderr, "error: cannot create a temporary folder\n");
    return ToInt(ExitCode::kFailure);
  }
  const SystemCommandRunner none(tmp.path() + "/none");  // vcgencmd not found
  const SystemCommandRunner runner(SearchPath(o, tmp.path()));

  auto bare = OpenSampler(tmp.path() + "/bare.csv", o.interval_ns, none);
  auto full = OpenSampler(tmp.path() + "/full.csv", o.interval_ns, runner);
  auto threaded = OpenSampler(tmp.path() + "/thread.csv", o.thread_interval_ns, runner);
  for (auto* s : {&bare, &full, &threaded}) {
    if (!*s) {
      std::fprintf(stderr, "error: %s\n", s->error().message.c_str());
      return ToInt(s->error().code);
    }
  }
  std::printf("columns: %zu without vcgencmd, %zu with (%s)\n", (*bare)->columns().size(),
              (*full)->columns().size(),
              o.vcgencmd == Vcgencmd::kFake   ? "fake vcgencmd, a shell script"
              : o.vcgencmd == Vcgencmd::kNone ? "none"
                                              : "vcgencmd from the given path");
  for (const auto& note : (*full)->notes()) std::printf("note: %s\n", note.c_str());

  std::printf("\n%-34s %7s %10s %10s %10s %10s %10s\n", "per sample", "samples", "thread us",
              "children", "total us", "wall us", "cost");
  const Cost bare_cost = DirectCalls(**bare, o.calls);
  PrintRow("SampleOnce, /sys + /proc only", bare_cost, o.interval_ns);
  const Cost full_cost = DirectCalls(**full, o.calls);
  PrintRow("SampleOnce, all sources", full_cost, o.interval_ns);
  const Cost thread_cost = ThreadRun(**threaded, o.thread_time_ns);
  char label[64];
  std::snprintf(label, sizeof label, "sampling thread, every %.0f ms",
                static_cast<double>(o.thread_interval_ns) / 1e6);
  PrintRow(label, thread_cost, o.interval_ns);
  if (o.vcgencmd != Vcgencmd::kNone) {
    PrintRow("(floor: 3 spawns of /bin/true)", SpawnFloor(o.calls), o.interval_ns);
  }

  const double percent =
      std::max(Percent(full_cost, o.interval_ns), Percent(thread_cost, o.interval_ns));
  std::printf("\ncost: total CPU per sample / the %.1f s interval, in %% of one CPU\n",
              static_cast<double>(o.interval_ns) / 1e9);
  std::printf(
      "monitor cost: %.4f%% of one CPU, the larger of 'all sources' and 'sampling "
      "thread' (target <= %.2f%%)\n",
      percent, o.target_percent);
  if (percent > o.target_percent) {
    std::printf("verdict: FAIL\n");
    return kTargetMissed;
  }
  std::printf("verdict: PASS\n");
  return 0;
}

}  // namespace
}  // namespace rtpulse

int main(int argc, char** argv) {
  return rtpulse::Run(rtpulse::ParseArgs(argc, argv));
}
