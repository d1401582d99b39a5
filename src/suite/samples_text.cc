#include "suite/samples_text.h"

#include <iterator>

#include "core/clock.h"
#include "core/timestamp.h"
#include "measure/wake_path.h"

namespace rtpulse::suite {
namespace {

int SamplesCpuColumn(uint16_t cpu) {
  return cpu == stats::kUnpinnedCpu ? -1 : cpu;
}

/// "12.345 us", exact (integer arithmetic), for any signed value.
std::string SamplesUs(int64_t ns) {
  const uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  const auto us = static_cast<uint64_t>(kNsPerUs);
  return fmt::format("{}{}.{:03} us", ns < 0 ? "-" : "", magnitude / us, magnitude % us);
}

/// One group's line of the summary.
std::string DescribeGroup(const stats::RecordGroup& g) {
  if (g.count == 0) return "no records";
  return fmt::format("{} record{}, min {}, max {}, missed {}", g.count, g.count == 1 ? "" : "s",
                     SamplesUs(g.min_ns), SamplesUs(g.max_ns), g.missed);
}

}  // namespace

SamplesCsvWriter::SamplesCsvWriter(std::FILE* out) : out_(out) {
  fmt::format_to(std::back_inserter(buffer_),
                 "thread,cpu,seq,expected_ns,actual_ns,latency_ns,wake,missed\n");
}

void SamplesCsvWriter::Add(const SampleRecord& r) {
  const auto wake = static_cast<measure::WakePath>(r.wake_path);
  fmt::format_to(std::back_inserter(buffer_), "{},{},{},{},{},{},{},{}\n", r.thread,
                 SamplesCpuColumn(r.cpu), r.seq, r.expected_ns, r.actual_ns, measure::LatencyNs(r),
                 measure::WakePathName(wake), (r.flags & SampleRecord::kMissed) != 0 ? 1 : 0);
  if (buffer_.size() >= kFlushBytes) Flush();
}

void SamplesCsvWriter::Flush() {
  std::fwrite(buffer_.data(), 1, buffer_.size(), out_);
  buffer_.clear();
}

std::string FormatSamplesSummary(const std::string& path, const measure::SamplesFileSummary& s,
                                 const stats::RecordTotals& totals) {
  const std::string started = UtcIsoSeconds(s.info.start_realtime_ns);
  std::string text = fmt::format("samples file  {}\n", path);
  text += fmt::format("started       {} (CLOCK_MONOTONIC {} ns)\n",
                      started.empty() ? "unknown" : started, s.info.start_monotonic_ns);
  text += fmt::format("records       {}\n", s.records);
  if (totals.all.count > 0) {
    text += fmt::format("latency       min {}, max {}\n", SamplesUs(totals.all.min_ns),
                        SamplesUs(totals.all.max_ns));
    text += fmt::format("missed        {}\n", totals.all.missed);
  }
  if (s.has_trailer) {
    text += fmt::format("dropped       {}\n", s.dropped);
    text += fmt::format("interrupted   {}\n", s.interrupted ? "yes" : "no");
  } else {
    text += "dropped       unknown (no trailer)\n";
    text += "interrupted   unknown (no trailer)\n";
  }
  for (const auto& [thread, group] : totals.threads) {
    text += fmt::format("  thread {:<4} cpu {:<3} {}\n", thread, SamplesCpuColumn(group.cpu),
                        DescribeGroup(group));
  }
  return text;
}

std::vector<std::string> SamplesFileWarnings(const std::string& path,
                                             const measure::SamplesFileSummary& s) {
  std::vector<std::string> out;
  if (!s.has_trailer) {
    out.push_back(fmt::format(
        "'{}' has no trailer: the run did not finish cleanly (crash, or still running), so it "
        "may be cut short and its drop count is unknown",
        path));
  }
  if (s.partial_bytes > 0 && s.version >= 2) {
    out.push_back(fmt::format(
        "'{}' ends with {} bytes from byte offset {} that are not a whole block (cut off or "
        "damaged), which were skipped; every block before them was read ('rtpulse samples "
        "--check' says more)",
        path, s.partial_bytes, s.torn_offset));
  } else if (s.partial_bytes > 0) {
    out.push_back(fmt::format("'{}' ends with a partial record ({} of 32 bytes), which was skipped",
                              path, s.partial_bytes));
  }
  if (s.dropped > 0) {
    out.push_back(fmt::format(
        "{} records were dropped while recording (the samples ring was full) and are missing "
        "from '{}'",
        s.dropped, path));
  }
  return out;
}

std::string FormatSamplesCheck(const std::string& path, const SamplesCheck& c) {
  std::string text = fmt::format("samples file  {}\n", path);
  text += fmt::format("version       {}\n", c.version);
  text += fmt::format("bytes         {}\n", c.file_bytes);
  if (c.version >= 2) {
    text += fmt::format("blocks        {} whole, {} bad\n", c.blocks_whole, c.blocks_bad);
    text += fmt::format("index         {}\n",
                        c.index_ok ? "present, matches the blocks" : "missing or damaged");
  }
  text += fmt::format("trailer       {}\n", c.has_trailer ? "yes" : "no");
  text += fmt::format("records       {} recovered\n", c.records);
  if (c.torn_bytes > 0) {
    text +=
        fmt::format("torn          {} bytes from byte offset {}\n", c.torn_bytes, c.torn_offset);
  } else {
    text += "torn          none\n";
  }
  text += fmt::format("status        {}\n", c.whole() ? "whole" : "damaged: " + c.problem);
  return text;
}

}  // namespace rtpulse::suite
