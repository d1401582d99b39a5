// rtpulse load SPEC... [--duration T] [--json FILE]: run loads alone, report what they did.
#include <fmt/format.h>
#include <signal.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/exit_code.h"
#include "core/parse.h"
#include "load/load_set.h"
#include "load/registry.h"
#include "load/spec.h"
#include "suite/facts.h"

namespace rtpulse::cli {

namespace {

struct LoadOptions {
  std::vector<std::string> specs;
  std::string duration = "0";
  std::string json;
  bool list = false;
};

nlohmann::json ToJson(const std::vector<load::LoadReport>& reports, bool interrupted) {
  return {{"cmdline", Invocation()},
          {"interrupted", interrupted},
          {"loads", suite::LoadReportsJson(reports)}};
}

/// Waits for the duration (0: forever) or SIGINT/SIGTERM/SIGHUP, taken synchronously.
bool WaitForEnd(const sigset_t& signals, int64_t duration_ns) {
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  const int64_t start_ns = int64_t{start.tv_sec} * 1'000'000'000 + start.tv_nsec;
  for (;;) {
    int64_t wait_ns = 1'000'000'000;
    if (duration_ns > 0) {
      timespec now{};
      clock_gettime(CLOCK_MONOTONIC, &now);
      const int64_t left =
          start_ns + duration_ns - (int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec);
      if (left <= 0) return false;
      wait_ns = std::min(wait_ns, left);
    }
    const timespec timeout{static_cast<time_t>(wait_ns / 1'000'000'000),
                           static_cast<long>(wait_ns % 1'000'000'000)};
    if (sigtimedwait(&signals, nullptr, &timeout) > 0) return true;
  }
}

int ListLoads() {
  for (const auto& d : load::Loads()) {
    const std::string why = d.supported();
    fmt::print("{:<10} {}{}\n", d.name, d.stresses, why.empty() ? "" : " [" + why + "]");
    for (const auto& o : d.options) {
      fmt::print("{:<10}   {:<16} {} (default {})\n", "", load::DescribeLoadOption(o), o.help,
                 o.fallback);
    }
  }
  return 0;
}

int RunLoadCommand(const LoadOptions& o) {
  if (o.list) return ListLoads();
  auto duration_ns = ParseDurationNs(o.duration);
  if (!duration_ns) return ReportError(duration_ns.error());
  auto specs = load::ParseLoadSpecs(o.specs);
  if (!specs) return ReportError(specs.error());
  for (auto& spec : *specs) spec.params.duration_ns = *duration_ns;

  // Block the end signals before any child exists; children restore their own mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  load::LoadSet loads(std::move(*specs));
  if (Status s = loads.Start(); !s) return ReportError(s.error());
  for (const auto& l : loads.loads()) {
    const auto r = l->Report();
    fmt::print(stderr, "rtpulse: load {} on CPUs {} (process group {})\n", r.spec,
               FormatCpuList(r.cpus), l->ProcessGroup());
  }
  const bool interrupted = WaitForEnd(signals, *duration_ns);
  loads.Stop();
  const auto reports = loads.Reports();
  int exit_code = interrupted ? ToInt(ExitCode::kInterrupted) : ToInt(ExitCode::kOk);
  if (!o.json.empty()) {
    if (Status s = WriteFileAtomic(o.json, ToJson(reports, interrupted).dump(2) + "\n"); !s) {
      exit_code = ReportError(s.error());
    }
  }
  std::fputs(load::FormatReportTable(reports).c_str(), stdout);
  std::fflush(stdout);
  return exit_code;
}

}  // namespace

Runner SetupLoad(CLI::App& sub) {
  auto o = std::make_shared<LoadOptions>();
  sub.add_option("spec", o->specs,
                 "loads: NAME[:key=value,...], joined by '+' or as several arguments, e.g.\n"
                 "cpu:cpus=0-1,intensity=50  memory:cpus=1,mb=256  io:fsync=1,dir=/tmp\n"
                 "net:proto=udp  'stress-ng:--cpu 2 --vm 1'  'cmd:cpus=1 ./my_app --fast'\n"
                 "(see --list, docs/loads.md)");
  sub.add_option("-D,--duration", o->duration,
                 "run time, e.g. 10s, 5m (no suffix: seconds; 0 = until Ctrl-C)");
  sub.add_option("--json", o->json, "write the report as JSON to this file");
  sub.add_flag("--list", o->list, "list the loads and what each stresses");
  sub.allow_extras(false);
  return [o] {
    if (!o->list && o->specs.empty()) {
      return ReportError(
          UsageError("no load given; give e.g. 'rtpulse load cpu:cpus=0' "
                     "(rtpulse load --list shows them)"));
    }
    return RunLoadCommand(*o);
  };
}

}  // namespace rtpulse::cli
