#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/fs_root.h"
#include "suite/e2e_workload.h"
#include "suite/runner.h"

// `rtpulse e2e`'s plan (docs/e2e.md): the options as typed (E2eRequest), checked and turned
// into a suite plan whose scenarios are the configurations (inference threads, loads or not)
// and the pipeline's settings. BuildE2ePlan starts and writes nothing; PrecheckE2e then opens
// every stage once (threads, source, model, alert), so a missing file, a busy GPIO line or a
// refused policy is said before anything is written.
namespace rtpulse::suite {

/// The command line of `rtpulse e2e`, before any check (the CLI's defaults). The numeric
/// options are kept as typed, so a value that is no number is named with an example.
struct E2eRequest {
  std::string source = "synthetic";
  std::string model;  ///< "": the generated default model (E2eDefaultModelPath)
  std::string backend;
  std::string input_size;  ///< --input-size WxH: for a model whose input size is symbolic
  std::string threads;     ///< "": 1
  std::string frames;      ///< "": 1000
  std::string warmup;      ///< "": 10
  std::string fps;
  std::string deadline;
  std::string reference;
  std::string crop;
  std::string roi;
  std::string near_m;   ///< "": 1.0
  std::string clear_m;  ///< "": 1.25, or --near x 1.25
  std::string alert = "none";
  std::string loopback;
  std::string capture_policy = "other";
  std::string capture_cpus;
  std::string inference_policy = "other";
  std::string inference_cpus;
  std::vector<std::string> load;
  std::string sweep;
  std::string out;
  std::string csv;
  std::string json;
  std::string invocation;  ///< For result.json.
  std::string version;
};

/// Everything checked and decided before anything is started or written.
struct E2ePlan {
  SuitePlan suite;
  E2eSettings settings;
  bool sweep = false;  ///< --sweep threads: a thread-count recommendation at the end.
};

/// Checks `request` against this machine (`root`: online CPUs) and builds the plan. Nothing
/// is started, opened or written; the results folder is checked, not created.
Expected<E2ePlan> BuildE2ePlan(const E2eRequest& request, const FsRoot& root);

/// Tries what only trying shows, before the run: each thread's policy and CPUs on a
/// short-lived thread, every stage opened once (and closed again), a finite source read up to
/// --warmup + 1 frames. Records the stages' worker threads in `plan.settings.precheck_workers`.
Status PrecheckE2e(E2ePlan& plan);

/// The generated default model: beside the binary in the build tree (build/src/rtpulse ->
/// build/models), or in the installed share folder (PREFIX/bin/rtpulse ->
/// PREFIX/share/rtpulse/models). Every place looked at is named when none has it.
Expected<std::string> E2eDefaultModelPath();

/// --input-size "WxH" (width then height, pixels, 1..8192 each); a usage error naming the
/// text and an example otherwise.
Expected<std::pair<int, int>> ParseE2eInputSize(const std::string& text);

}  // namespace rtpulse::suite
