#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "e2e/actuation.h"
#include "e2e/frame_source.h"
#include "e2e/inference.h"
#include "e2e/pipeline.h"
#include "e2e/processing.h"
#include "results/e2e_result.h"
#include "results/e2e_summary.h"
#include "suite/runner.h"
#include "sys/system_info.h"

// The perception-to-actuation pipeline as a suite workload (`rtpulse e2e`, docs/e2e.md): per
// scenario one configuration (inference thread count, loads or not), the stages opened for it
// and e2e::RunPipeline run, then the scenario's files (e2e_inference_latency.csv, frames.csv,
// e2e_statistics.txt, samples.bin, e2e.json). The scenario's "latency" in result.json is
// Total = alert - capture of every frame, so `report`, `compare` and `wcet` read an e2e run
// as they read a latency run.
namespace rtpulse::suite {

/// One configuration of an e2e run: a scenario of the suite.
struct E2eConfiguration {
  std::string scenario;       ///< "baseline", "loaded", "threads-2", "threads-2-loaded".
  int threads = 1;            ///< Inference threads asked of the backend.
  bool loaded = false;        ///< Runs under the scenario's loads (--load).
  std::string configuration;  ///< For people: "threads 2, loaded".
};

/// What every configuration of a run shares.
struct E2eSettings {
  e2e::SourceSpec source;
  std::string reference_file;                   ///< --reference; "" = the source's own.
  std::vector<e2e::ReferencePoint> references;  ///< Read from reference_file.
  std::string model_path;
  e2e::BackendKind backend = e2e::BackendKind::kOpenCv;
  int input_width = 0;  ///< --input-size; 0: the model's own (fixed) size.
  int input_height = 0;
  e2e::PreprocessSpec preprocess;
  e2e::DecisionSpec decision;
  e2e::AlertSpec alert;
  std::string loopback;  ///< --loopback gpio:CHIP:LINE; "" = none.
  e2e::PipelineSettings pipeline;
  std::vector<E2eConfiguration> configurations;
  std::vector<std::string> load_specs;
  std::vector<std::string> notes;  ///< Planning remarks for the run's warnings.
  /// Threads that appeared while the CLI's check loaded the model (OpenCV's pool is
  /// process-wide and outlives that backend): each scenario counts them among its backend's
  /// workers, and every other thread present before its own Load (the suite's monitor) not.
  std::vector<int> precheck_workers;
};

/// What one scenario left, for the summary, the sweep's recommendation and the figures.
struct E2eOutcome {
  std::string scenario;
  std::string configuration;
  int threads = 1;
  bool loaded = false;
  std::vector<results::E2eFrameRow> rows;
  results::E2eRunFacts facts;
  bool interrupted = false;
};

/// The model's label: "latency-representative, not trained" when the file says so (the
/// generated models carry it in their metadata), else "as given (not checked by rtpulse)".
std::string ModelLabel(const std::string& model_path);
/// "the source ran out: N of --frames M frame(s) recorded ...": e2e.json's note and the
/// summary's line for a finite source that ended before --frames.
std::string E2eSourceRanOutNote(uint64_t recorded, uint64_t asked, uint64_t warmup);

/// frames.csv rows from the pipeline's records (field for field).
std::vector<results::E2eFrameRow> E2eRowsOf(const std::vector<e2e::FrameRecord>& frames);

/// The stages of one run, opened and prepared (the source primed with one frame read, so its
/// size is known). Everything the user can fix fails here with the usage or resource error
/// of the stage: the CLI opens one set before anything is started or written.
struct E2eStagesOwned {
  std::unique_ptr<e2e::FrameSource> source;
  std::unique_ptr<e2e::InferenceBackend> backend;
  e2e::Preprocessor preprocess;
  e2e::Postprocessor postprocess;
  std::unique_ptr<e2e::AlertSink> alert;
  std::unique_ptr<e2e::Loopback> loopback;
  int source_width = 0;
  int source_height = 0;
  bool timing_only = false;  ///< No reference depths: timed, no depth, no decision.
  e2e::PipelineStages View();
};
/// The note a timing-only run carries in every output (its warnings, e2e.json,
/// e2e_statistics.txt, the printed summary).
std::string E2eTimingOnlyNote(const std::string& source);
Expected<std::unique_ptr<E2eStagesOwned>> OpenE2eStages(const E2eSettings& settings, int threads);

class E2eWorkload final : public Workload {
 public:
  E2eWorkload(E2eSettings settings, sys::SystemInfo info, std::string version,
              std::string invocation);

  nlohmann::json ConfigJson() const override;
  std::vector<std::string> Notes() const override { return notes_; }
  Expected<Measured> Measure(const std::string& dir, const std::string& name, int64_t duration_ns,
                             int64_t checkpoint_ns,
                             const std::function<void(const results::LatencyRun&)>& checkpoint,
                             Progress& progress) override;

  const std::vector<E2eOutcome>& outcomes() const { return outcomes_; }
  uint64_t frames_asked() const { return settings_.pipeline.frames; }
  uint64_t warmup_frames() const { return settings_.pipeline.warmup_frames; }

 private:
  E2eSettings settings_;
  sys::SystemInfo info_;
  std::string version_;
  std::string invocation_;
  std::vector<std::string> notes_;
  std::vector<E2eOutcome> outcomes_;
  /// The backend's worker threads found so far (the precheck's, then each scenario's): never
  /// taken for threads from before the backend's load (docs/e2e.md, "Worker threads").
  std::vector<int> known_workers_;
};

/// --sweep threads: the count whose p99 Total (nearest rank) is lowest among `outcomes` of
/// one load condition (`loaded`); ties go to the fewer threads. Nullopt when none has frames.
struct ThreadRecommendation {
  int threads = 0;
  int64_t p99_ns = 0;
  std::vector<std::pair<int, int64_t>> p99_by_threads;  ///< Every count with frames.
};
std::optional<ThreadRecommendation> RecommendThreads(const std::vector<E2eOutcome>& outcomes,
                                                     bool loaded);

/// The run summary's scenarios (results/e2e_summary.h) from the workload's outcomes, and with
/// `sweep` the recommendation per load condition; the rest (not measured, figure notes,
/// folder, status) the command adds from the run.
results::E2eSummary E2eSummaryOf(const E2eWorkload& workload, bool sweep);

}  // namespace rtpulse::suite
