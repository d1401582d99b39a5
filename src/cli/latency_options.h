#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/explain_text.h"
#include "core/error.h"
#include "core/version.h"
#include "measure/engine.h"
#include "trace/explainer.h"

namespace CLI {
class App;
}  // namespace CLI

namespace rtpulse::cli {

/// cyclictest's default -d: thread N's interval is -i + N x 500 us, unless -h/-H is given.
inline constexpr int64_t kDefaultDistanceUs = 500;

/// --inject DELAY@RATE ("2ms@10Hz"); usage errors name the value (shared with `serve`).
Expected<measure::InjectPlan> ParseInject(const std::string& text);

/// Usage error naming `flag` and the first CPU of `cpus` that is not in `online`.
Status CheckCpusOnline(const std::vector<int>& cpus, const std::vector<int>& online,
                       const char* flag);

/// `rtpulse latency` options as typed on the command line (cyclictest spelling).
struct LatencyOptions {
  bool affinity_given = false;
  std::string affinity;  ///< -a [CPUSET]; "" with affinity_given = all CPUs.
  bool threads_given = false;
  std::string threads;          ///< -t [NUM]; "" = one per CPU.
  bool smp = false;             ///< -S
  std::optional<int> priority;  ///< -p
  std::string policy;           ///< --policy
  bool priospread = false;
  int64_t interval_us = 1000;
  std::optional<int64_t> distance_us;  ///< -d (default kDefaultDistanceUs; none with -h/-H)
  std::string duration;                ///< -D
  int64_t loops = 0;
  bool mlockall = false;
  std::optional<int64_t> histogram_us;  ///< -h
  std::optional<int64_t> histofall_us;  ///< -H
  std::string histfile;
  bool quiet = false;
  bool nsecs = false;
  bool unbuffered = false;                ///< -u: stdout unbuffered, for live processing
  std::optional<int64_t> aligned_us;      ///< -A USEC: thread N's grid N x USEC after the origin
  bool secaligned_given = false;          ///< --secaligned [USEC]
  std::string secaligned;                 ///< its USEC ("" = 0)
  bool relative = false;                  ///< -r
  bool posix = false;                     ///< -x
  bool system = false;                    ///< -s: nanosleep(2), which the kernel runs as -r
  std::string clock;                      ///< -c CLOCK: 0/monotonic (default), 1/realtime, ...
  std::string fifo;                       ///< -F PATH: a named pipe handing out the status lines
  std::optional<int64_t> oscope;          ///< -o RED: with -v, the largest of every RED samples
  bool refresh_on_max = false;            ///< -M: redraw the live view on a new maximum only
  bool resolution = false;                ///< -R: measure the clock's resolution first
  bool debug = false;                     ///< --dbg_cyclictest: print the threads' set-up
  bool smi = false;                       ///< --smi: count SMIs on each thread's CPU (x86 MSR)
  std::optional<int> deepest_idle_state;  ///< --deepest-idle-state N (-1: every state off)
  std::optional<int64_t> breaktrace_us;
  bool tracemark = false;
  std::optional<int64_t> spike_us;
  int64_t spike_nodes = 1024;
  bool verbose = false;
  std::string json;
  bool laptop = false;
  /// --allow-degraded: measure even when the real-time set-up is refused (marked degraded)
  /// instead of stopping with exit 3 before measuring, as cyclictest does.
  bool allow_degraded = false;
  bool default_system = false;
  std::optional<int> latency_pm_qos;
  std::string mainaffinity;
  // rtpulse's own.
  std::string wake;        ///< --wake a,b,... or gpio:CHIP:LINE
  std::string wake_drive;  ///< --wake-drive gpio:CHIP:LINE (with --wake gpio)
  std::string samples;     ///< --samples FILE
  std::string textfile;    ///< --textfile DIR (node_exporter's textfile collector)
  std::string inject;      ///< --inject DELAY@RATE
  std::string budget;      ///< --budget LATENCY[@PERCENTILE] (docs/budget.md)
  std::optional<int64_t> dl_runtime_us;
  std::string explain;          ///< --explain US (a bare number is us; a unit is accepted)
  std::string explain_windows;  ///< --explain-windows DIR
  bool explain_cost_given = false;
  std::string explain_cost = "2s";  ///< --explain-cost DUR (0 = no cost phase)
  std::string explain_events;       ///< --explain-events lean|full ("" = lean)
};

/// The environment variable that overrides where tracefs is (tests, unusual mounts).
inline constexpr const char* kTracefsEnv = "RTPULSE_TRACEFS";
/// RTPULSE_TRACEFS when set and not empty, else "" (the session finds tracefs itself).
std::string TracefsDirFromEnv();

/// The --explain threshold: a bare number is microseconds, a unit is accepted ("200us",
/// "0.2ms"). `flag` names the option in the error.
Expected<int64_t> ParseExplainThresholdNs(const std::string& text, const char* flag = "--explain");

/// --explain-events (latency, suite, control): "" or "lean" = the events the attribution
/// reads, "full" = every event the trace knows (docs/trace.md#events). Usage errors: another
/// value, or a value given without --explain (`explain_given` false).
Expected<trace::EventSet> ParseExplainEvents(const std::string& text, bool explain_given);

/// --explain US and --explain-events of `suite` and `control`: the threshold, the events and
/// the tracefs folder (RTPULSE_TRACEFS); the traced CPUs are the plan's to set. nullopt
/// without --explain.
Expected<std::optional<trace::ExplainPlan>> ParseExplainOption(const std::string& explain,
                                                               const std::string& events);

/// A suite command's request (suite::SuiteRequest, ControlRequest) completed from the command
/// line: --explain's plan and how its verdicts read, this process's invocation and version.
template <typename Request>
Status CompleteRequest(Request& request, const std::string& explain, const std::string& events) {
  auto plan = ParseExplainOption(explain, events);
  if (!plan) return plan.error();
  request.explain = std::move(*plan);
  request.verdict_line = ExplainVerdictLine;
  request.invocation = Invocation();
  request.version = kVersion;
  return {};
}

/// Declares the `rtpulse latency` options (cyclictest's spelling) on `sub`, bound to `o`.
void DeclareLatencyOptions(CLI::App& sub, LatencyOptions& o);
/// After parsing: records whether -a and -t were given (both may come without a value).
void NoteGivenOptions(const CLI::App& sub, LatencyOptions& o);

/// Checks every option and builds the immutable plan. Any problem is one UsageError line
/// naming the value and the fix; nothing has been written when it returns an error.
Expected<measure::LatencyPlan> BuildLatencyPlan(const LatencyOptions& options,
                                                const std::vector<int>& online_cpus);

/// --explain's plan for `plan` (from BuildLatencyPlan): the threshold, the windows folder,
/// the cost phase and the trace session on the probes' CPUs (every online CPU when a probe is
/// not pinned). nullopt without --explain. Usage errors: a bad or non-positive threshold,
/// --explain-windows/--explain-cost without --explain, a windows path that is a file or
/// whose parent folder is missing, a bad or negative --explain-cost, or one that leaves no
/// time to explain in -D.
Expected<std::optional<trace::ExplainPlan>> BuildExplainPlan(const LatencyOptions& options,
                                                             const measure::LatencyPlan& plan,
                                                             const std::vector<int>& online_cpus);

}  // namespace rtpulse::cli
