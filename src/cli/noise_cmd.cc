// rtpulse noise: OS noise seen by a busy-polling thread per CPU, oslat's options and outputs
// (docs/noise.md). Parses, plans (suite/noise_plan.h), runs and writes.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/exit_code.h"
#include "core/fs_root.h"
#include "core/version.h"
#include "suite/noise_plan.h"
#include "sys/system_info.h"

namespace rtpulse::cli {
namespace {

struct NoiseOptions {
  suite::NoiseRequest request;
  std::string json;
  std::string events;
  bool quiet = false;
};

int RunNoiseCommand(const NoiseOptions& o) {
  auto planned = suite::BuildNoisePlan(o.request, FsRoot::System());
  if (!planned) return ReportError(planned.error());
  for (const std::string* file : {&o.json, &o.events}) {
    if (file->empty() || *file == "-") continue;
    if (Status s = CheckWritable(*file); !s) return ReportError(s.error());
  }
  const sys::SystemInfo info = sys::ProbeSystem(FsRoot::System());
  auto run = suite::MeasureNoise(*planned, info, Invocation(), kVersion);
  if (!run) return ReportError(run.error());
  int exit_code = run->interrupted ? ToInt(ExitCode::kInterrupted) : ToInt(ExitCode::kOk);
  if (Status s = WriteOutput(o.json, results::ToJson(*run).dump(2) + "\n"); !s) {
    exit_code = ReportError(s.error());
  }
  if (!o.events.empty()) {
    if (Status s = WriteFileAtomic(o.events, results::FormatNoiseEvents(*run)); !s) {
      exit_code = ReportError(s.error());
    }
  }
  if (o.json != "-") {
    if (!o.quiet) std::fputs(results::FormatOslatText(*run).c_str(), stdout);
    std::fputs(results::FormatNoiseSummary(*run).c_str(), stdout);
  }
  return exit_code;
}

}  // namespace

Runner SetupNoise(CLI::App& sub) {
  auto o = std::make_shared<NoiseOptions>();
  suite::NoiseRequest& r = o->request;
  sub.add_option("-c,--cpu-list", r.cpus,
                 "CPUs to poll, e.g. 1,3,5-7 (default: every online CPU but CPU 0)");
  sub.add_option("-D,--duration", r.duration, "run time, e.g. 60, 20m, 2h (0: until Ctrl-C)")
      ->capture_default_str();
  sub.add_option("-f,--rtprio", r.rtprio, "SCHED_FIFO priority 1..99 (oslat's -f)");
  sub.add_option("--policy", r.policy, "the pollers' policy: other, fifo:N or rr:N")
      ->capture_default_str()
      ->each([&r](const std::string&) { r.policy_given = true; });
  sub.add_option("--threshold", r.threshold, "a gap above this is a noise event, e.g. 5us")
      ->capture_default_str();
  sub.add_option("-W,--bucket-width", r.bucket_width, "histogram bucket width, e.g. 1us, 500ns")
      ->capture_default_str();
  sub.add_option("-b,--bucket-size", r.buckets, "number of histogram buckets (4..1024)")
      ->capture_default_str();
  sub.add_option("-T,--trace-threshold", r.stop_above,
                 "stop the run at the first gap above this many us (oslat's -T)");
  sub.add_flag("--explain", r.explain,
               "attribute every noise event from the kernel trace: irq, softirq, thread, "
               "unaccounted (needs tracefs)");
  sub.add_option("--explain-max", r.explain_max, "events attributed per CPU; later ones counted")
      ->capture_default_str();
  sub.add_option("--json", o->json, "write the results as JSON (oslat's layout, plus rtpulse's)");
  sub.add_option("--events", o->events, "write every noise event as CSV (cpu,start_ns,gap_ns)");
  sub.add_flag("-q,--quiet", o->quiet, "print the summary only, not oslat's histograms");
  sub.allow_extras(false);
  return [o] { return RunNoiseCommand(*o); };
}

}  // namespace rtpulse::cli
