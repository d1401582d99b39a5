// rtpulse e2e: the perception-to-actuation pipeline, source -> preprocess -> inference ->
// postprocess -> decision -> alert, timed per frame (docs/e2e.md). Options become a suite plan
// whose scenarios are the configurations (inference threads, loads or not) and a
// suite::E2eWorkload (suite/e2e_plan.h, where every check lives); the suite runner runs them.
// This file parses, runs the plan and prints.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/live_view.h"
#include "cli/scenario_progress.h"
#include "core/atomic_file.h"
#include "core/exit_code.h"
#include "core/fs_root.h"
#include "core/version.h"
#include "report/e2e_figures.h"
#include "results/cyclictest_format.h"
#include "results/e2e_result.h"
#include "results/e2e_summary.h"
#include "results/e2e_sweep.h"
#include "suite/e2e_plan.h"
#include "suite/e2e_workload.h"
#include "suite/machine_run.h"
#include "suite/runner.h"
#include "sys/system_info.h"

namespace rtpulse::cli {
namespace {

/// The options as typed: the plan's request and what only the command uses.
struct E2eOptions {
  suite::E2eRequest request;
  bool quiet = false;
};

/// The request checked into a plan, then what only trying shows (suite/e2e_plan.h).
Expected<suite::E2ePlan> BuildE2ePlan(E2eOptions& o) {
  o.request.invocation = Invocation();
  o.request.version = kVersion;
  auto plan = suite::BuildE2ePlan(o.request, FsRoot::System());
  if (!plan) return plan.error();
  if (Status s = suite::PrecheckE2e(*plan); !s) return s.error();
  return plan;
}

class E2eProgress final : public ScenarioProgress {
 public:
  using ScenarioProgress::ScenarioProgress;

 protected:
  std::string SettlingLine(int64_t left_ns) const override {
    return fmt::format("[{}/{}] {}: loads settling, {} left", index_ + 1, count_, name_,
                       suite::FormatClock(left_ns));
  }
  std::string MeasuringLine(const suite::LiveStatus& s) const override {
    return fmt::format("[{}/{}] {}: frames {}  elapsed {}", index_ + 1, count_, name_, s.samples,
                       suite::FormatClock(s.elapsed_ns));
  }
};

/// The summary table (and the sweep's recommendations) of the run's summary.
void PrintE2eSummary(const results::E2eSummary& summary, const suite::E2eWorkload& workload,
                     std::FILE* text) {
  std::vector<std::string> ran_out_lines;
  fmt::print(text, "{:<20} {:>7} {:>12} {:>12} {:>12} {:>8} {:>8} {:>10}\n", "scenario", "frames",
             "p50 Total", "p99 Total", "max Total", "misses", "dropped", "frames/s");
  for (const auto& r : summary.scenarios) {
    if (r.p50_total_ns) {
      const std::string p99 = results::E2ePercentileText(*r.p99_total_ns, 99, r.total_count);
      fmt::print(text, "{:<20} {:>7} {:>9} ms {:>12} {:>9} ms {:>8} {:>8} {:>10}\n", r.scenario,
                 r.frames, results::E2eMsText(*r.p50_total_ns), p99 == "n/a" ? p99 : p99 + " ms",
                 results::E2eMsText(*r.max_total_ns),
                 r.misses ? std::to_string(*r.misses) : std::string("-"), r.dropped,
                 r.throughput_fps ? fmt::format("{:.3f}", *r.throughput_fps) : std::string("n/a"));
    } else {
      fmt::print(text, "{:<20} {:>7} (no frame recorded)\n", r.scenario, 0);
    }
    if (r.source_ran_out) {
      ran_out_lines.push_back(fmt::format(
          "{}: {}", r.scenario,
          suite::E2eSourceRanOutNote(r.frames, workload.frames_asked(), workload.warmup_frames())));
    }
  }
  for (const auto& line : ran_out_lines) fmt::print(text, "{}\n", line);
  if (!summary.recommendation) return;
  for (const auto& r : *summary.recommendation) {
    std::string all;
    for (const auto& [threads, ns] : r.p99_total_ns_by_threads) {
      all += fmt::format("{}{}: {} ms", all.empty() ? "" : ", ", threads, results::E2eMsText(ns));
    }
    fmt::print(text,
               "recommendation{}: {} inference thread{} (lowest p99 Total, {} ms; p99 by "
               "threads: {})\n",
               r.loaded ? " under load" : "", r.threads, r.threads == 1 ? "" : "s",
               results::E2eMsText(r.p99_total_ns), all);
  }
}

void WriteE2eFiguresOf(const std::string& run_dir, const suite::E2eWorkload& workload,
                       results::E2eSummary& summary, std::FILE* text) {
  std::vector<report::E2eFigureInput> inputs;
  for (const auto& o : workload.outcomes()) inputs.push_back({o.scenario, o.rows});
  std::vector<std::string> notes;
  if (Status s = report::WriteE2eFigures(run_dir, inputs, {}, &notes); !s) {
    notes.push_back("figures not written: " + s.error().message);
  }
  for (const auto& n : notes) fmt::print(text, "note: {}\n", n);
  summary.figure_notes = notes;
}

int RunE2e(E2eOptions& o) {
  auto built = BuildE2ePlan(o);
  if (!built) return ReportError(built.error());
  suite::E2ePlan& plan = *built;

  suite::MachineRun machine(FsRoot::System(),
                            fmt::format("rtpulse {} e2e, {}", kVersion, Invocation()));
  suite::E2eWorkload workload(plan.settings, machine.info(), kVersion, Invocation());
  E2eProgress progress(StderrProgressMode(o.quiet));
  const suite::RunOutcome outcome = machine.Run(plan.suite, workload, progress);
  if (suite::NothingRan(outcome)) return ToInt(outcome.code);  // the runner said why
  std::FILE* text = o.request.json == "-" ? stderr : stdout;
  results::E2eSummary summary = suite::E2eSummaryOf(workload, plan.sweep);
  PrintE2eSummary(summary, workload, text);
  // A scenario the suite started but never measured (interrupted while its loads settled):
  // its folder stays, as for every suite, and result.json marks it; the summary says so too.
  for (const auto& s : outcome.result.scenarios) {
    if (s.latency || s.status != results::ScenarioStatus::kInterrupted) continue;
    fmt::print(text, "{}: not measured: {}\n", s.name, s.error);
    summary.not_measured.push_back({s.name, s.error});
  }
  WriteE2eFiguresOf(plan.suite.out_dir, workload, summary, text);
  summary.results = plan.suite.out_dir;
  summary.status = outcome.result.status;
  const nlohmann::json doc = results::ToJson(summary);
  int code = ToInt(outcome.code);
  const auto fail = [&](const Status& s) {
    if (s) return;
    ReportError(s.error());
    if (code == 0) code = ToInt(ExitCode::kFailure);
  };
  if (summary.recommendation) {
    fail(WriteFileAtomic(plan.suite.out_dir + "/sweep.json",
                         results::SweepFileJson(*summary.recommendation).dump(2) + "\n"));
  }
  if (!o.request.csv.empty() && !workload.outcomes().empty()) {
    // The first scenario's frames (the baseline, or threads-1 of a sweep), as the seed wrote.
    fail(results::WriteE2eLatencyCsv(o.request.csv, workload.outcomes().front().rows));
  }
  fail(WriteOutput(o.request.json, doc.dump(2) + "\n"));
  PrintRunEnd(outcome, plan.suite.out_dir, text);
  return code;
}

}  // namespace

Runner SetupE2e(CLI::App& sub) {
  auto o = std::make_shared<E2eOptions>();
  sub.add_option("--source", o->request.source,
                 "synthetic (default), synthetic:WxH, video:PATH, images:DIR or v4l2:DEVICE");
  sub.add_option("--model", o->request.model,
                 "depth model, .onnx (OpenCV DNN) or .tflite (Arm NN); default: the generated "
                 "depth-default.onnx (latency-representative, not trained)");
  sub.add_option("--backend", o->request.backend,
                 "opencv or armnn (default: from the model's extension)");
  sub.add_option("--input-size", o->request.input_size,
                 "WxH the frames are resized to, for a model whose input size is symbolic "
                 "(1x3x?x?); a fixed size needs none");
  sub.add_option("--threads", o->request.threads, "inference threads (default 1)");
  sub.add_option("--frames", o->request.frames, "frames recorded per scenario (default 1000)");
  sub.add_option("--warmup", o->request.warmup, "frames run first, not recorded (default 10)");
  sub.add_option("--fps", o->request.fps,
                 "periodic mode at this frame rate (default: back-to-back, each frame when the "
                 "previous one is done)");
  sub.add_option("--deadline", o->request.deadline,
                 "a frame misses when Total exceeds this, e.g. 100ms (periodic default: one "
                 "frame period)");
  sub.add_option("--reference", o->request.reference,
                 "reference depths, CSV lines x,y,depth_m in source pixels (default: the "
                 "source's own, the ground plane of synthetic frames)");
  sub.add_option("--crop", o->request.crop, "X0,Y0,X1,Y1 fractions of the frame (default all)");
  sub.add_option("--roi", o->request.roi,
                 "X0,Y0,X1,Y1 fractions of the depth map judged (default 0.35,0.5,0.65,1)");
  sub.add_option("--near", o->request.near_m, "obstacle below this depth, metres (default 1.0)");
  sub.add_option("--clear", o->request.clear_m,
                 "clear again above this depth, metres (default 1.25)");
  sub.add_option("--alert", o->request.alert,
                 "none (default), stdout, file:PATH or gpio:CHIP:LINE");
  sub.add_option("--loopback", o->request.loopback,
                 "gpio:CHIP:LINE, an input wired to the alert line: its kernel edge timestamps");
  sub.add_option("--capture-policy", o->request.capture_policy,
                 "capture thread: other (default), fifo:PRIO or rr:PRIO");
  sub.add_option("--capture-cpus", o->request.capture_cpus, "capture thread's CPUs, e.g. 1 or 2-3");
  sub.add_option("--inference-policy", o->request.inference_policy,
                 "inference thread and the backend's workers: other (default), fifo:PRIO, rr:PRIO");
  sub.add_option("--inference-cpus", o->request.inference_cpus,
                 "inference thread's and workers' CPUs, e.g. 2-3");
  sub.add_option("--load", o->request.load,
                 "load SPEC (docs/loads.md): adds a loaded scenario beside the plain one; "
                 "repeatable");
  sub.add_option("--sweep", o->request.sweep,
                 "threads: one scenario per inference thread count 1..N, the lowest p99 Total "
                 "recommended");
  sub.add_option("-o,--out", o->request.out,
                 "results folder (default ./rtpulse_e2e_YYYYMMDD_HHMMSS)");
  sub.add_option("--csv", o->request.csv,
                 "also write the first scenario's e2e_inference_latency.csv to this file");
  sub.add_option("--json", o->request.json,
                 "also write the run summary as JSON to this file ('-': stdout)");
  sub.add_flag("-q,--quiet", o->quiet, "no progress lines; only the final summary");
  sub.allow_extras(false);
  sub.footer(
      "Exit codes: 0 every scenario complete, 1 a scenario failed, 2 bad usage or input\n"
      "            (nothing run, nothing written), 3 missing resource (a backend not built,\n"
      "            no default model, a camera or GPIO line absent or busy), 130 interrupted\n"
      "            (results for the frames so far are written and marked).\n"
      "Docs: docs/e2e.md, docs/suite.md, docs/loads.md.");
  return [o] { return RunE2e(*o); };
}

}  // namespace rtpulse::cli
