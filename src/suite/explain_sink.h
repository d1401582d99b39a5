// --explain beside the samples log: the engine's sample writer drains every probe's ring
// into one sink (measure/sample_log.h); this one shows each batch to the explainer (which
// picks the samples above its threshold, O(1) for the others) and then passes it on to the
// sink the run asked for (the --samples file, -v text, or none).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "measure/sample_log.h"
#include "trace/explainer.h"

namespace rtpulse::suite {

class ExplainSink final : public measure::SampleSink {
 public:
  /// `explainer` is not owned and must outlive the sink; `inner` may be null (the ring is
  /// there for --explain alone: nothing is written anywhere).
  ExplainSink(trace::Explainer* explainer, std::unique_ptr<measure::SampleSink> inner);

  /// The explainer sees the batch first (it only queues), then the inner sink writes it;
  /// the inner sink's error is returned. An idle tick (count 0) reaches the inner sink only.
  Status Write(const SampleRecord* records, size_t count) override;
  /// Hands the probes' tids to the explainer (which filters the trace's syscalls to them),
  /// then to the inner sink.
  void OnProbeThreads(const measure::ProbeThreadIds& threads) override;
  /// Finishes the inner sink. The explainer is finished by its owner, which needs its
  /// summary after the run.
  Status Finish(uint64_t dropped, bool interrupted) override;

  /// Records shown to the explainer so far.
  uint64_t seen() const { return seen_.load(std::memory_order_relaxed); }
  /// The rings' drops reported to Finish(): samples the explainer never saw.
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  bool has_inner() const { return inner_ != nullptr; }

 private:
  trace::Explainer* explainer_;
  std::unique_ptr<measure::SampleSink> inner_;
  std::atomic<uint64_t> seen_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace rtpulse::suite
