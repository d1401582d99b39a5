#include "suite/hwlat_plan.h"

#include <fmt/format.h>

#include "core/clock.h"
#include "core/parse.h"
#include "core/printable.h"

namespace rtpulse::suite {
namespace {

/// hwlatdetect's microseconds: a bare number is us, else a time with its unit.
Expected<int64_t> HwlatMicros(std::string_view option, const std::string& text) {
  auto ns = ParseTimeNs(text, kNsPerUs);
  if (!ns || *ns <= 0) {
    return UsageError(fmt::format("{} {}: give a time above 0, in us (10) or with a unit (10us)",
                                  option, Printable(text)));
  }
  return *ns;
}

/// Why loop mode runs: what the kernel's tracefs says of the hwlat tracer.
std::string LoopModeReason(const FsRoot& root) {
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    const auto tracers = root.ReadLine(std::string(dir) + "/available_tracers");
    if (!tracers) continue;
    if ((" " + *tracers + " ").find(" hwlat ") != std::string::npos) {
      return "the kernel has the hwlat tracer; rtpulse does not drive it yet";
    }
    return "the kernel has no hwlat tracer (CONFIG_HWLAT_TRACER)";
  }
  return "tracefs is not mounted yet, so the hwlat tracer was not looked for";
}

}  // namespace

Expected<HwlatPlanned> BuildHwlatPlan(const HwlatRequest& request, const FsRoot& root) {
  if (request.mode != "auto" && request.mode != "loop") {
    return UsageError(fmt::format(
        "--mode {}: rtpulse hwlat runs busy loops with the kernel trace (loop) so far; give "
        "--mode loop or leave it out",
        Printable(request.mode)));
  }
  HwlatPlanned out;
  auto threshold = HwlatMicros("--threshold", request.threshold);
  if (!threshold) return threshold.error();
  out.threshold_ns = *threshold;
  out.hardlimit_ns = out.threshold_ns;
  if (!request.hardlimit.empty()) {
    auto hardlimit = HwlatMicros("--hardlimit", request.hardlimit);
    if (!hardlimit) return hardlimit.error();
    out.hardlimit_ns = *hardlimit;
  }
  NoiseRequest noise;
  noise.cpus = request.cpus;
  noise.duration = request.duration;
  noise.policy = request.policy;
  noise.policy_given = true;
  // The loops' events are the gaps above the threshold: only those can hold a sample.
  noise.threshold = fmt::format("{}ns", out.threshold_ns);
  noise.explain = true;
  noise.explain_max = request.explain_max;
  auto planned = BuildNoisePlan(noise, root);
  if (!planned) {
    // Name hwlat's options, not noise's.
    std::string message = planned.error().message;
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"-c ", "--cpu-list "}, {"-D ", "--duration "}}) {
      if (message.rfind(from, 0) == 0) message = to + message.substr(from.size());
    }
    return UsageError(message);
  }
  if (planned->plan.duration_ns == 0) {
    return UsageError("--duration 0: hwlat needs a run time (its MTBF is per time), e.g. 120");
  }
  out.noise = std::move(*planned);
  out.noise.explain_required = true;
  out.mode_reason = LoopModeReason(root);
  return out;
}

Expected<results::HwlatRun> MeasureHwlat(const HwlatPlanned& planned, const sys::SystemInfo& info,
                                         const std::string& invocation, const std::string& version,
                                         results::NoiseRun* loops) {
  auto noise = MeasureNoise(planned.noise, info, invocation, version);
  if (!noise) return noise.error();
  results::HwlatRun run = results::HwlatFromNoise(*noise, planned.threshold_ns);
  run.hardlimit_ns = planned.hardlimit_ns;
  run.mode_reason = planned.mode_reason;
  if (loops != nullptr) *loops = std::move(*noise);
  return run;
}

}  // namespace rtpulse::suite
