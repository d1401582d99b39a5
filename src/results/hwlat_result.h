#pragma once

// What `rtpulse hwlat` measured (docs/hwlat.md), with its writers and reader: the JSON
// document, hwlatdetect's report and rtpulse's summary. In loop mode a hardware-latency sample
// is the part of a busy loop's gap in which the loop was current on its CPU yet did not run,
// and the kernel trace shows nothing else there: an NMI, an SMI, firmware or a VM's host.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "results/noise_result.h"

namespace rtpulse::results {

struct HwlatSample {
  int cpu = -1;
  int64_t start_ns = 0;     ///< CLOCK_MONOTONIC of the loop's read before the gap.
  int64_t realtime_ns = 0;  ///< The same instant on the wall clock (for the report's ts).
  int64_t latency_ns = 0;   ///< The gap's unaccounted time: the sample's value.
  int64_t gap_ns = 0;       ///< The whole gap (IRQs, threads ... included).
};

struct HwlatRun {
  std::string rtpulse_version;
  std::string cmdline;
  std::string mode;         ///< "loop": busy loops and the kernel trace.
  std::string mode_reason;  ///< Why this mode ran (e.g. "the kernel has no hwlat tracer").
  int64_t start_realtime_ns = 0;
  int64_t end_realtime_ns = 0;
  int64_t duration_planned_ns = 0;
  int64_t threshold_ns = 0;  ///< A sample is unaccounted time above this.
  int64_t hardlimit_ns = 0;  ///< The run fails when a sample is above this.
  bool interrupted = false;
  std::string kernel;
  std::string machine;
  std::vector<std::string> warnings;
  struct Cpu {
    int cpu = -1;
    int64_t duration_ns = 0;    ///< Measured: the loop's first read to its last.
    uint64_t gaps = 0;          ///< Gaps the loop measured.
    uint64_t examined = 0;      ///< Gaps above the threshold attributed from the trace.
    uint64_t not_examined = 0;  ///< Gaps above the threshold the trace did not attribute.
  };
  std::vector<Cpu> cpus;
  std::vector<HwlatSample> samples;  ///< Every CPU's, in time order.

  int64_t MaxNs() const;  ///< Largest sample; 0 with none.
  /// Time measured (summed over CPUs) per sample: the mean time between failures. Absent
  /// with no sample: then the run says "none in" its time instead (a lower bound only).
  std::optional<double> MtbfSeconds() const;
  double MeasuredSeconds() const;  ///< Summed over CPUs.
  bool Failed() const { return MaxNs() > hardlimit_ns; }
  /// Samples per whole microsecond (rounded up, as hwlat's us): only the non-empty ones.
  std::map<int64_t, uint64_t> HistogramUs() const;
};

/// Loop mode: the samples of a noise run with --explain. Each explained event whose
/// unaccounted time is above `threshold_ns` is a sample of that time; events not explained are
/// counted per CPU as not examined.
HwlatRun HwlatFromNoise(const NoiseRun& noise, int64_t threshold_ns);

nlohmann::json ToJson(const HwlatRun& run);
Expected<HwlatRun> HwlatRunFromJson(const nlohmann::json& doc);
/// hwlatdetect's report: its header, parameters, "Max Latency", "Samples recorded", "Samples
/// exceeding threshold", and one "ts: S.NNNNNNNNN, inner:N, outer:0, cpu:N" line per sample.
std::string FormatHwlatdetectReport(const HwlatRun& run);
/// rtpulse's lines: per CPU, the samples, the MTBF and the verdict against the hard limit.
std::string FormatHwlatSummary(const HwlatRun& run);

}  // namespace rtpulse::results
