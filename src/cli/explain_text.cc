#include "cli/explain_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/clock.h"

namespace rtpulse::cli {
namespace {

/// Microseconds with one decimal: the table's unit (the JSON keeps ns).
std::string ExplainUs(int64_t ns) {
  return fmt::format("{:.1f}", static_cast<double>(ns) / 1e3);
}

void AppendExplainCauses(std::string& out, const char* title,
                         const std::vector<results::ExplainCause>& causes, size_t rows) {
  out += fmt::format("{} (top {} of {}):\n", title, std::min(rows, causes.size()), causes.size());
  out += fmt::format("  {:<12} {:<40} {:>12} {:>7} {:>10}\n", "kind", "cause", "total_us", "spikes",
                     "max_us");
  for (size_t i = 0; i < causes.size() && i < rows; ++i) {
    const auto& c = causes[i];
    out += fmt::format("  {:<12} {:<40} {:>12} {:>7} {:>10}\n", c.kind, c.name,
                       ExplainUs(c.total_ns), c.spikes, ExplainUs(c.max_ns));
  }
}

}  // namespace

std::string ExplainVerdictLine(const trace::Explanation& e, const std::string& verdict) {
  return fmt::format("explain: T:{} cpu {} seq {} {}", e.spike.thread, e.spike.cpu, e.spike.seq,
                     verdict);
}

std::string FormatExplainTable(const results::ExplainResult& x, int64_t run_ns, size_t rows) {
  std::string out;
  out += fmt::format("explain: spikes above {} us: {} seen, {} explained, {} not explained\n",
                     ExplainUs(x.threshold_ns), x.spikes_seen, x.spikes_explained,
                     x.spikes_not_explained);
  if (!x.active) {
    out += fmt::format("explain: no attribution: {}\n", x.unavailable_reason);
    return out;
  }
  const double seconds = static_cast<double>(run_ns) / 1e9;
  const std::string rate =
      run_ns > 0 ? fmt::format("{:.0f}", static_cast<double>(x.events_read) / seconds) : "?";
  out += fmt::format(
      "explain: trace {} ({} events): {} events read, {} lost, {} events/s, reader CPU {:.1f} "
      "ms\n",
      x.instance, x.event_set, x.events_read, x.events_lost, rate,
      static_cast<double>(x.reader_cpu_ns) / 1e6);
  if (!x.syscall_filter.empty()) {
    out += fmt::format("explain: the probe's syscalls traced (raw_syscalls filter: {})\n",
                       x.syscall_filter);
  }
  if (x.events_lost > 0) {
    out += "explain: the kernel dropped events: windows that lost some are marked incomplete\n";
  }
  if (x.cost) {
    const auto& c = *x.cost;
    out += fmt::format(
        "explain: trace cost: without p50 {} us p99 {} us ({} samples), with p50 {} us p99 {} "
        "us ({} samples)\n",
        ExplainUs(c.p50_without_ns), ExplainUs(c.p99_without_ns), c.samples_without,
        ExplainUs(c.p50_with_ns), ExplainUs(c.p99_with_ns), c.samples_with);
  } else {
    out += "explain: trace cost not measured (no cost phase with samples on both sides)\n";
  }
  if (!x.causes_by_time.empty()) {
    AppendExplainCauses(out, "causes by total time", x.causes_by_time, rows);
    AppendExplainCauses(out, "causes by count", x.causes_by_count, rows);
  }
  for (const auto& note : x.notes) out += fmt::format("explain: note: {}\n", note);
  return out;
}

}  // namespace rtpulse::cli
