// --explain's text outputs: the live verdict line of a spike and the end-of-run cause table
// with its totals and notes (docs/explain.md#outputs).
#pragma once

#include <cstdint>
#include <string>

#include "results/explain_result.h"
#include "trace/attribution.h"

namespace rtpulse::cli {

/// "explain: T:0 cpu 1 seq 4711 +83 us: 61 us softirq NET_RX in ktimers/2, ...".
std::string ExplainVerdictLine(const trace::Explanation& explanation, const std::string& verdict);

/// The end-of-run block: the spike counts, the trace's events read and lost, events/s over
/// `run_ns` and the reader's CPU time, the cost phase (p50/p99 without and with the trace),
/// the top `rows` causes by total time and by count, and the explainer's notes. An inactive
/// explainer gives the reason and the count of spikes seen, nothing else.
std::string FormatExplainTable(const results::ExplainResult& explain, int64_t run_ns,
                               size_t rows = 10);

}  // namespace rtpulse::cli
