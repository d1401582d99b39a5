// The control loop's own cost per job, for bench/control_overhead: control::RunControlLoop (the
// loop `rtpulse control` runs: its thread, RT set-up, the real wake source and clock) with an
// empty job body, so every instruction its thread executes per job is the harness's. The script
// runs this under callgrind for two job counts and takes the slope of the loop thread's
// instructions (bench/README.md, "control_overhead").
//
// Usage: rtpulse_control_overhead [--jobs N] [--period-us N] [--path NAME] [--policy SPEC]
//                                 [--no-live]
// Prints one line "jobs J releases R skipped S misses M applied POLICY" and any warnings.
// Exit codes: 0 ran all jobs, 1 the loop failed or ran fewer jobs, 2 bad usage.
#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "control/control_loop.h"
#include "core/parse.h"
#include "measure/wake_path.h"

namespace rtpulse {
namespace {

/// The job body the benchmark subtracts: it does nothing, and stays out of line (a virtual
/// call through JobBody&, as every real body), so callgrind shows its cost under this name.
class OverheadEmptyJob final : public control::JobBody {
 public:
  void Run(uint64_t /*k*/) override {}
};

struct OverheadOptions {
  uint64_t jobs = 2000;
  int64_t period_ns = 200'000;
  measure::WakePath path = measure::WakePath::kAbs;
  std::string policy = "other:0";
  bool live = true;
};

int OverheadUsage(const std::string& message) {
  std::fprintf(stderr,
               "rtpulse_control_overhead: %s\nusage: rtpulse_control_overhead [--jobs N] "
               "[--period-us N] [--path NAME] [--policy SPEC] [--no-live]\n",
               message.c_str());
  return 2;
}

int RunOverhead(int argc, char** argv) {
  OverheadOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--no-live") {
      o.live = false;
      continue;
    }
    if (i + 1 >= argc) return OverheadUsage(fmt::format("{} needs a value", arg));
    const std::string_view value = argv[++i];
    if (arg == "--jobs") {
      auto n = ParseSignedInt(value, "--jobs");
      if (!n || *n < 1 || static_cast<uint64_t>(*n) > control::kMaxJobs) {
        return OverheadUsage(
            fmt::format("--jobs '{}': give a whole number in 1..{}", value, control::kMaxJobs));
      }
      o.jobs = static_cast<uint64_t>(*n);
    } else if (arg == "--period-us") {
      auto n = ParseSignedInt(value, "--period-us");
      if (!n || *n < 1) {
        return OverheadUsage(
            fmt::format("--period-us '{}': give a whole number of microseconds >= 1", value));
      }
      o.period_ns = *n * 1000;
    } else if (arg == "--path") {
      auto path = measure::WakePathFromName(value);
      if (!path) {
        return OverheadUsage(fmt::format(
            "--path '{}': give abs, timerfd, posix, itimer, epoll, busy, xthread or deadline",
            value));
      }
      o.path = *path;
    } else if (arg == "--policy") {
      o.policy = std::string(value);
    } else {
      return OverheadUsage(fmt::format("unknown option '{}'", arg));
    }
  }
  auto policy = control::ParsePolicySpec(o.policy);
  if (!policy) return OverheadUsage(policy.error().message);
  control::ControlLoopPlan plan;
  plan.policy = *policy;
  plan.path = o.path;
  plan.period_ns = o.period_ns;
  plan.jobs = o.jobs;
  OverheadEmptyJob body;
  std::atomic<bool> stop{false};
  control::ControlLive live;
  auto rec = control::RunControlLoop(plan, body, stop, o.live ? &live : nullptr);
  if (!rec) {
    std::fprintf(stderr, "rtpulse_control_overhead: %s\n", rec.error().message.c_str());
    return rec.error().code == ExitCode::kUsage ? 2 : 1;
  }
  std::printf("jobs %zu releases %llu skipped %llu misses %llu applied %s\n", rec->jobs.size(),
              static_cast<unsigned long long>(rec->releases),
              static_cast<unsigned long long>(rec->skipped),
              static_cast<unsigned long long>(rec->misses), rec->applied_policy.c_str());
  for (const std::string& warning : rec->warnings) {
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
  if (rec->jobs.size() != o.jobs) {
    std::fprintf(stderr, "rtpulse_control_overhead: ran %zu of %llu jobs\n", rec->jobs.size(),
                 static_cast<unsigned long long>(o.jobs));
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace rtpulse

int main(int argc, char** argv) {
  return rtpulse::RunOverhead(argc, argv);
}
