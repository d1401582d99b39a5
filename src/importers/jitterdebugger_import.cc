// jitterdebugger: its results.json (per-CPU histograms) and its samples.raw (every sample).
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "importers/import_internal.h"
#include "importers/line_reader.h"
#include "importers/number.h"

namespace rtpulse::importers::internal {
namespace {

/// jitterdebugger's histogram has a fixed 1000 slots of 1 us: HIST_MAX_ENTRIES in older
/// jitterdebugger.c; Debian's 0.3.1+git20200117 binary allocates 1'000'000 / (1000 ns per
/// unit) slots, the same 1000 in microseconds (1'000'000 of 1 ns with -N, refused here). A
/// latency of 1000 us or more is counted and summed (count, avg) but not in the histogram.
constexpr int64_t kHistogramSlots = 1000;

}  // namespace

Expected<Imported> ImportJitterdebuggerJson(const std::string& path, const std::string& text) {
  auto doc = ParseJson(path, text);
  if (!doc) return doc.error();
  auto cpus = doc->find("cpu");
  if (!doc->is_object() || cpus == doc->end() || !cpus->is_object()) {
    return At(path, 1, 1, "no \"cpu\" object: not jitterdebugger output",
              "give jitterdebugger's results.json, or name the format with --format");
  }
  int64_t resolution_ns = 1000;
  if (auto s = doc->find("sysinfo"); s != doc->end() && s->is_object()) {
    if (auto r = s->find("resolution_in_ns"); r != s->end() && r->is_number_integer()) {
      resolution_ns = r->get<int64_t>();
    }
  }
  if (resolution_ns != 1000) {
    return At(
        path, 1, 1,
        fmt::format("resolution_in_ns {} (jitterdebugger -N): not supported yet", resolution_ns),
        "re-run jitterdebugger without -N");
  }
  Imported out;
  for (const auto& [key, t] : cpus->items()) {
    size_t pos = 0;
    int64_t cpu = 0;
    if (ParseScaledNs(key, pos, 1, cpu) != NumberError::kNone || pos != key.size() || cpu < 0 ||
        !t.is_object()) {
      const size_t at = text.find("\"" + key + "\"");
      const auto [line, col] = LineCol(text, at == std::string::npos ? 0 : at);
      return At(path, line, col, fmt::format("cpu key \"{}\" is not a CPU number", key),
                "cpu.N must be objects keyed by CPU number");
    }
    auto probe =
        ProbeFromToolJson(path, text, "cpu." + key, t, "count", static_cast<int>(out.probes.size()),
                          kHistogramSlots, 1000, false, out);
    if (!probe) return probe.error();
    probe->cpu = static_cast<int>(cpu);
    out.probes.push_back(std::move(*probe));
  }
  if (out.probes.empty()) return At(path, 1, 1, "\"cpu\" is empty", "re-run jitterdebugger");
  if (!out.has_distribution) {
    out.probes.clear();
    out.warnings.push_back("jitterdebugger's histograms are empty: percentiles are unavailable");
  }
  return out;
}

namespace {

/// jitterdebugger's struct latency_sample as written to samples.raw (packed, host order):
/// u32 cpuid, struct timespec {i64 tv_sec, i64 tv_nsec} (the wake-up, CLOCK_MONOTONIC),
/// u64 val (latency in us, in ns with -N).
constexpr size_t kRawRecordBytes = 28;

struct RawRecord {
  uint32_t cpu;
  int64_t sec;
  int64_t nsec;
  uint64_t value;
};

RawRecord Decode(const unsigned char* p) {
  RawRecord r{};
  std::memcpy(&r.cpu, p, 4);
  std::memcpy(&r.sec, p + 4, 8);
  std::memcpy(&r.nsec, p + 12, 8);
  std::memcpy(&r.value, p + 20, 8);
  return r;
}

}  // namespace

Expected<Imported> ImportJitterdebuggerRaw(const std::string& path, SampleConsumer* samples) {
  auto opened = ChunkReader::Open(path);
  if (!opened) return opened.error();
  ChunkReader& reader = **opened;
  if (samples != nullptr && reader.is_pipe()) {
    return UsageError(fmt::format(
        "{}: is a pipe, and samples.raw is read twice (checked, then streamed to samples.bin); "
        "save it to a file first, or import it with --no-samples",
        path));
  }
  Imported out;
  std::map<uint32_t, size_t> probe_of;
  // Validate every record first (nothing streamed from a bad file), then stream.
  for (int pass = 0; pass < (samples != nullptr ? 2 : 1); ++pass) {
    if (pass > 0) {
      if (Status s = reader.Rewind(); !s) return s.error();
    }
    std::map<uint32_t, uint64_t> seq;
    for (;;) {
      auto run = reader.NextRecords(kRawRecordBytes);
      if (!run) return run.error();
      if (run->empty()) break;
      const auto* bytes = reinterpret_cast<const unsigned char*>(run->data());
      for (size_t i = 0; i < run->size(); i += kRawRecordBytes) {
        const RawRecord r = Decode(bytes + i);
        const uint64_t at = reader.offset() + i;
        // The time must fit in int64 nanoseconds (until 2262): a larger tv_sec is not a
        // clock reading, and computing its nanoseconds would overflow.
        constexpr int64_t kMaxSec = (INT64_MAX - 999'999'999) / 1'000'000'000;
        if (r.cpu > 4095 || r.nsec < 0 || r.nsec >= 1'000'000'000 || r.sec < 0 || r.sec > kMaxSec ||
            r.value > 3'600'000'000ULL) {
          return UsageError(fmt::format(
              "{}: record {} at byte {}: cpu {} time {}.{:09d} value {} is not a jitterdebugger "
              "sample; give jitterdebugger's samples.raw (28-byte records) or name the format "
              "with --format",
              path, at / kRawRecordBytes, at, r.cpu, r.sec, r.nsec, r.value));
        }
        const int64_t latency_ns = static_cast<int64_t>(r.value) * 1000;
        if (pass == 0) {
          auto [it, added] = probe_of.try_emplace(r.cpu, out.probes.size());
          if (added)
            out.probes.push_back(
                NewProbe(static_cast<int>(out.probes.size()), static_cast<int>(r.cpu)));
          out.probes[it->second].histogram.Record(latency_ns);
          ++out.probes[it->second].periods_elapsed;
        } else {
          const int64_t actual = r.sec * 1'000'000'000 + r.nsec;
          samples->Add(TimedSample{static_cast<uint16_t>(probe_of[r.cpu]),
                                   static_cast<uint16_t>(r.cpu), seq[r.cpu]++, actual - latency_ns,
                                   latency_ns});
          ++out.samples_streamed;
        }
      }
    }
    if (const size_t stray = reader.stray_bytes(); stray != 0) {
      const uint64_t whole = reader.offset();
      return UsageError(fmt::format(
          "{}: {} stray bytes at byte {} (records are {} bytes): the file is cut short; drop "
          "the last partial record (truncate -s {} FILE)",
          path, stray, whole, kRawRecordBytes, whole));
    }
  }
  if (out.probes.empty()) return At(path, 1, 1, "empty file", "nothing to import");
  out.warnings.push_back(
      "jitterdebugger samples.raw values are whole microseconds; it may hold a few samples "
      "fewer than results.json counts (the last ones were not flushed when the run stopped)");
  return out;
}

}  // namespace rtpulse::importers::internal
