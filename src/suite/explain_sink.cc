#include "suite/explain_sink.h"

#include <utility>

namespace rtpulse::suite {

ExplainSink::ExplainSink(trace::Explainer* explainer, std::unique_ptr<measure::SampleSink> inner)
    : explainer_(explainer), inner_(std::move(inner)) {}

Status ExplainSink::Write(const SampleRecord* records, size_t count) {
  if (count > 0 && explainer_ != nullptr) {
    explainer_->OnSamples(records, count);
    seen_.fetch_add(count, std::memory_order_relaxed);
  }
  if (inner_ == nullptr) return Status::Ok();
  return inner_->Write(records, count);
}

void ExplainSink::OnProbeThreads(const measure::ProbeThreadIds& threads) {
  if (explainer_ != nullptr) {
    explainer_->SetProbeThreads(
        {threads.wake, threads.from_ns, threads.probe_tids, threads.helper_tids});
  }
  if (inner_ != nullptr) inner_->OnProbeThreads(threads);
}

Status ExplainSink::Finish(uint64_t dropped, bool interrupted) {
  dropped_.store(dropped, std::memory_order_relaxed);
  if (inner_ == nullptr) return Status::Ok();
  return inner_->Finish(dropped, interrupted);
}

}  // namespace rtpulse::suite
