// rtpulse hwlat: hardware and firmware latency, hwlatdetect's options and report
// (docs/hwlat.md). Parses, plans (suite/hwlat_plan.h), runs and writes.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/exit_code.h"
#include "core/fs_root.h"
#include "core/version.h"
#include "suite/hwlat_plan.h"
#include "sys/system_info.h"

namespace rtpulse::cli {
namespace {

struct HwlatOptions {
  suite::HwlatRequest request;
  std::string json;
  std::string report;
  std::string events;
  bool quiet = false;
};

int RunHwlatCommand(const HwlatOptions& o) {
  auto planned = suite::BuildHwlatPlan(o.request, FsRoot::System());
  if (!planned) return ReportError(planned.error());
  for (const std::string* file : {&o.json, &o.report, &o.events}) {
    if (file->empty() || *file == "-") continue;
    if (Status s = CheckWritable(*file); !s) return ReportError(s.error());
  }
  const sys::SystemInfo info = sys::ProbeSystem(FsRoot::System());
  results::NoiseRun loops;
  auto run = suite::MeasureHwlat(*planned, info, Invocation(), kVersion,
                                 o.events.empty() ? nullptr : &loops);
  if (!run) return ReportError(run.error());
  int exit_code = run->interrupted ? ToInt(ExitCode::kInterrupted)
                  : run->Failed()  ? ToInt(ExitCode::kBudgetNotMet)
                                   : ToInt(ExitCode::kOk);
  if (Status s = WriteOutput(o.json, results::ToJson(*run).dump(2) + "\n"); !s) {
    exit_code = ReportError(s.error());
  }
  if (!o.report.empty()) {
    if (Status s = WriteFileAtomic(o.report, results::FormatHwlatdetectReport(*run)); !s) {
      exit_code = ReportError(s.error());
    }
  }
  if (!o.events.empty()) {
    if (Status s = WriteFileAtomic(o.events, results::FormatNoiseEvents(loops)); !s) {
      exit_code = ReportError(s.error());
    }
  }
  if (o.json != "-") {
    if (!o.quiet) std::fputs(results::FormatHwlatdetectReport(*run).c_str(), stdout);
    std::fputs(results::FormatHwlatSummary(*run).c_str(), stdout);
  }
  return exit_code;
}

}  // namespace

Runner SetupHwlat(CLI::App& sub) {
  auto o = std::make_shared<HwlatOptions>();
  suite::HwlatRequest& r = o->request;
  sub.add_option("--cpu-list", r.cpus,
                 "CPUs to measure, e.g. 1,3,5-7 (default: every online CPU but CPU 0)");
  sub.add_option("--duration", r.duration, "run time: seconds, or 30s, 20m, 2h")
      ->capture_default_str();
  sub.add_option("--threshold", r.threshold,
                 "a sample is unaccounted time above this: us (10) or with a unit (500ns)")
      ->capture_default_str();
  sub.add_option("--hardlimit", r.hardlimit,
                 "the run fails (exit 4) when a sample is above this (default: the threshold)");
  sub.add_option("--policy", r.policy, "the loops' policy: other, fifo:N or rr:N")
      ->capture_default_str();
  sub.add_option("--mode", r.mode, "auto or loop (busy loops with the kernel trace)")
      ->capture_default_str();
  sub.add_option("--explain-max", r.explain_max, "gaps attributed per CPU; later ones counted")
      ->capture_default_str();
  sub.add_option("--json", o->json, "write the results as JSON ('-': standard output)");
  sub.add_option("--report", o->report, "write hwlatdetect's report (its --report) to a file");
  sub.add_option(
      "--events", o->events,
      "write every gap above the threshold with its causes as CSV (noise's events file)");
  sub.add_flag("-q,--quiet", o->quiet, "print rtpulse's summary only, not hwlatdetect's report");
  sub.allow_extras(false);
  return [o] { return RunHwlatCommand(*o); };
}

}  // namespace rtpulse::cli
