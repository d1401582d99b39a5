#include "results/e2e_result.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/atomic_file.h"
#include "core/histogram.h"
#include "core/parse.h"
#include "core/printable.h"
#include "results/control_result.h"
#include "results/csv_field.h"

namespace rtpulse::results {
namespace {

Expected<int64_t> E2eSpan(int64_t from, int64_t to, uint64_t frame, const char* from_name,
                          const char* to_name, bool negative_ok = false) {
  int64_t d = 0;
  if (__builtin_sub_overflow(to, from, &d)) {
    return Failure(fmt::format("frame {}: {} {} ns - {} {} ns overflows 64 bits", frame, to_name,
                               to, from_name, from));
  }
  if (d < 0 && !negative_ok) {
    return Failure(fmt::format(
        "frame {}: {} ({} ns) lies before {} ({} ns): the pipeline's stages run in order (a bug "
        "in its timestamps, not clamped to 0)",
        frame, to_name, to, from_name, from));
  }
  return d;
}

int64_t E2eNearestRank(const std::vector<int64_t>& sorted, double percentile) {
  return sorted[Histogram::NearestRank(percentile, sorted.size()) - 1];
}

/// The frames.csv columns, in kE2eFramesHeader's order.
constexpr const char* kE2eFrameColumns[] = {
    "index",          "source_seq",     "release_ns",           "capture_ns",  "read_end_ns",
    "infer_start_ns", "pre_end_ns",     "inference_end_ns",     "post_end_ns", "alert_ns",
    "edge_ns",        "dropped_before", "lost_before",          "obstacle",    "changed",
    "miss",           "roi_depth_m",    "capture_stage_ns",     "queue_ns",    "preproc_ns",
    "inference_ns",   "postproc_ns",    "decision_to_alert_ns", "total_ns"};
constexpr size_t kE2eRoiColumn = 16;

Expected<E2eFrameRow> E2eParseRow(std::string_view line, const std::string& where) {
  const auto fields = SplitFields(line);
  constexpr size_t kColumns = std::size(kE2eFrameColumns);
  if (fields.size() != kColumns) {
    return UsageError(fmt::format("{}: {} fields where frames.csv has {} ({}): '{}'", where,
                                  fields.size(), kColumns, kE2eFramesHeader, Printable(line)));
  }
  int64_t v[kColumns] = {};
  for (size_t i = 0; i < kColumns; ++i) {
    if (i == kE2eRoiColumn) continue;
    auto parsed =
        ParseCsvInteger(fields[i], where, kE2eFrameColumns[i],
                        " (frames.csv holds integers there; rewrite it with rtpulse e2e)");
    if (!parsed) return parsed.error();
    v[i] = *parsed;
  }
  // Empty: the frame's ROI depth is not known (no fit, no valid ROI value, timing only).
  const std::string roi_text(fields[kE2eRoiColumn]);
  char* roi_end = nullptr;
  const double roi = roi_text.empty() ? std::numeric_limits<double>::quiet_NaN()
                                      : std::strtod(roi_text.c_str(), &roi_end);
  if (!roi_text.empty() && (roi_end != roi_text.c_str() + roi_text.size() || !std::isfinite(roi))) {
    return UsageError(
        fmt::format("{}: roi_depth_m '{}' is neither a finite number of metres nor empty (unknown)",
                    where, Printable(roi_text)));
  }
  for (const size_t i : {size_t{0}, size_t{1}}) {
    if (v[i] < 0) {
      return UsageError(fmt::format("{}: {} {} is negative", where, kE2eFrameColumns[i], v[i]));
    }
  }
  for (const size_t i : {size_t{11}, size_t{12}}) {
    if (v[i] < 0 || v[i] > UINT32_MAX) {
      return UsageError(fmt::format("{}: {} {} is out of range (0 to {})", where,
                                    kE2eFrameColumns[i], v[i], UINT32_MAX));
    }
  }
  for (const size_t i : {size_t{13}, size_t{14}, size_t{15}}) {
    if (v[i] != 0 && v[i] != 1) {
      return UsageError(fmt::format("{}: {} '{}' is not 0 or 1", where, kE2eFrameColumns[i], v[i]));
    }
  }
  if (v[10] < -1) {
    return UsageError(
        fmt::format("{}: edge_ns {} is neither -1 (no edge) nor a timestamp", where, v[10]));
  }
  E2eFrameRow row;
  row.index = static_cast<uint64_t>(v[0]);
  row.source_seq = static_cast<uint64_t>(v[1]);
  row.release_ns = v[2];
  row.capture_ns = v[3];
  row.read_end_ns = v[4];
  row.infer_start_ns = v[5];
  row.pre_end_ns = v[6];
  row.inference_end_ns = v[7];
  row.post_end_ns = v[8];
  row.alert_ns = v[9];
  row.edge_ns = v[10];
  row.dropped_before = static_cast<uint32_t>(v[11]);
  row.lost_before = static_cast<uint32_t>(v[12]);
  row.obstacle = v[13] == 1;
  row.changed = v[14] == 1;
  row.miss = v[15] == 1;
  row.roi_depth_m = roi;
  auto stages = StagesOf(row);
  if (!stages) return UsageError(fmt::format("{}: {}", where, stages.error().message));
  const struct {
    size_t column;
    int64_t derived;
    const char* rule;
  } checks[] = {{17, stages->capture_ns, "read_end_ns - capture_ns"},
                {18, stages->queue_ns, "infer_start_ns - read_end_ns"},
                {19, stages->preproc_ns, "pre_end_ns - infer_start_ns"},
                {20, stages->inference_ns, "inference_end_ns - pre_end_ns"},
                {21, stages->postproc_ns, "post_end_ns - inference_end_ns"},
                {22, stages->decision_to_alert_ns, "alert_ns - post_end_ns"},
                {23, stages->total_ns, "alert_ns - capture_ns"}};
  for (const auto& c : checks) {
    if (v[c.column] != c.derived) {
      return UsageError(fmt::format("{}: {} {} is not {} = {}", where, kE2eFrameColumns[c.column],
                                    v[c.column], c.rule, c.derived));
    }
  }
  return row;
}

Status E2eCheckRows(const std::vector<E2eFrameRow>& rows) {
  for (const auto& r : rows) {
    auto s = StagesOf(r);
    if (!s) return s.error();
  }
  return Status::Ok();
}

std::string E2eStatsLine(const std::string& name, const std::vector<int64_t>& values) {
  auto s = ComputeE2eStageStats(values);
  if (!s) return fmt::format("{:<16} n/a (no frame has this stage)\n", name);
  // The mean and std as ns rounded to the nearest whole ns, printed like every other column.
  const auto ms = [](double ns) { return E2eMsText(std::llround(ns)); };
  return fmt::format("{:<16} {:>7} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}\n", name,
                     s->count, ms(s->mean_ns), ms(s->std_ns), E2eMsText(s->min_ns),
                     E2eMsText(s->p50_ns), E2ePercentileText(s->p90_ns, 90, s->count),
                     E2ePercentileText(s->p99_ns, 99, s->count), E2eMsText(s->max_ns));
}

}  // namespace

std::optional<double> E2eThroughputFps(const std::vector<E2eFrameRow>& rows) {
  if (rows.size() < 2) return std::nullopt;
  const int64_t span = rows.back().alert_ns - rows.front().alert_ns;
  if (span <= 0) return std::nullopt;
  return static_cast<double>(rows.size() - 1) * 1e9 / static_cast<double>(span);
}

std::string E2ePercentileText(int64_t value_ns, double percentile, uint64_t count) {
  return count < MinCountForPercentile(percentile) ? std::string("n/a") : E2eMsText(value_ns);
}

Expected<E2eStages> StagesOf(const E2eFrameRow& row) {
  E2eStages s;
  const struct {
    int64_t from;
    int64_t to;
    const char* from_name;
    const char* to_name;
    int64_t* out;
    bool negative_ok;
  } spans[] = {
      // capture_ns is the source's stamp (a driver's clock, of its own meaning): it may lie
      // after the read's end, so Capture (and Total) may be negative, shown as measured.
      {row.capture_ns, row.read_end_ns, "capture_ns", "read_end_ns", &s.capture_ns, true},
      {row.read_end_ns, row.infer_start_ns, "read_end_ns", "infer_start_ns", &s.queue_ns, false},
      {row.infer_start_ns, row.pre_end_ns, "infer_start_ns", "pre_end_ns", &s.preproc_ns, false},
      {row.pre_end_ns, row.inference_end_ns, "pre_end_ns", "inference_end_ns", &s.inference_ns,
       false},
      {row.inference_end_ns, row.post_end_ns, "inference_end_ns", "post_end_ns", &s.postproc_ns,
       false},
      {row.post_end_ns, row.alert_ns, "post_end_ns", "alert_ns", &s.decision_to_alert_ns, false},
      {row.capture_ns, row.alert_ns, "capture_ns", "alert_ns", &s.total_ns, true},
  };
  for (const auto& span : spans) {
    auto d = E2eSpan(span.from, span.to, row.index, span.from_name, span.to_name, span.negative_ok);
    if (!d) return d.error();
    *span.out = *d;
  }
  if (row.edge_ns >= 0) {
    // The kernel timestamps the edge while the alert write is in the kernel, so it may lie
    // before alert_ns, never before the decision.
    auto d = E2eSpan(row.post_end_ns, row.edge_ns, row.index, "post_end_ns", "edge_ns");
    if (!d) return d.error();
    s.decision_to_edge_ns = *d;
  }
  return s;
}

std::string E2eMsText(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t mag = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:06d}", negative ? "-" : "", mag / 1'000'000, mag % 1'000'000);
}

std::string FormatE2eLatencyCsv(const std::vector<E2eFrameRow>& rows) {
  std::string out = std::string(kE2eLatencyHeader) + "\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    auto s = StagesOf(rows[i]);
    if (!s) continue;  // Write* refuses such rows before formatting
    out +=
        fmt::format("{},{},{},{},{},{},{}\n", i + 1, E2eMsText(s->total_ns),
                    E2eMsText(s->preproc_ns), E2eMsText(s->inference_ns), E2eMsText(s->postproc_ns),
                    E2eMsText(s->capture_ns), E2eMsText(s->decision_to_alert_ns));
  }
  return out;
}

std::string FormatFrameLog(const std::vector<E2eFrameRow>& rows) {
  std::string out = std::string(kE2eFramesHeader) + "\n";
  for (const auto& r : rows) {
    auto s = StagesOf(r);
    if (!s) continue;
    // An unknown ROI depth (NaN) is an empty field, never "nan" (which no reader takes).
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{:d},{:d},{:d},{},", r.index,
                       r.source_seq, r.release_ns, r.capture_ns, r.read_end_ns, r.infer_start_ns,
                       r.pre_end_ns, r.inference_end_ns, r.post_end_ns, r.alert_ns, r.edge_ns,
                       r.dropped_before, r.lost_before, r.obstacle, r.changed, r.miss,
                       std::isfinite(r.roi_depth_m) ? fmt::format("{:.6f}", r.roi_depth_m) : "");
    out += fmt::format("{},{},{},{},{},{},{}\n", s->capture_ns, s->queue_ns, s->preproc_ns,
                       s->inference_ns, s->postproc_ns, s->decision_to_alert_ns, s->total_ns);
  }
  return out;
}

Status WriteE2eLatencyCsv(const std::string& path, const std::vector<E2eFrameRow>& rows) {
  if (Status s = E2eCheckRows(rows); !s) return s;
  return WriteFileAtomic(path, FormatE2eLatencyCsv(rows));
}

Status WriteFrameLog(const std::string& path, const std::vector<E2eFrameRow>& rows) {
  if (Status s = E2eCheckRows(rows); !s) return s;
  return WriteFileAtomic(path, FormatFrameLog(rows));
}

Expected<std::vector<E2eFrameRow>> ReadFrameLog(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return UsageError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  }
  std::string line;
  if (!std::getline(in, line)) {
    return UsageError(fmt::format("{}: empty file; frames.csv starts with the header line '{}'",
                                  path, kE2eFramesHeader));
  }
  if (line != kE2eFramesHeader) {
    return UsageError(fmt::format("{}:1: header '{}' is not frames.csv's '{}'", path,
                                  Printable(line), kE2eFramesHeader));
  }
  std::vector<E2eFrameRow> rows;
  size_t number = 1;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = fmt::format("{}:{}", path, number);
    auto row = E2eParseRow(line, where);
    if (!row) return row.error();
    if (!rows.empty() && row->index <= rows.back().index) {
      return UsageError(fmt::format("{}: index {} does not follow {} (frames are in order)", where,
                                    row->index, rows.back().index));
    }
    rows.push_back(*row);
  }
  return rows;
}

Expected<E2eStageStats> ComputeE2eStageStats(std::vector<int64_t> values_ns) {
  if (values_ns.empty()) return UsageError("no frames to summarise");
  std::sort(values_ns.begin(), values_ns.end());
  E2eStageStats s;
  s.count = values_ns.size();
  Int128 sum = 0;
  for (const int64_t v : values_ns) sum += v;
  const auto n = static_cast<long double>(s.count);
  const long double mean = static_cast<long double>(sum) / n;
  long double ss = 0;
  for (const int64_t v : values_ns) {
    const long double d = static_cast<long double>(v) - mean;
    ss += d * d;
  }
  s.mean_ns = static_cast<double>(mean);
  s.std_ns = static_cast<double>(std::sqrt(ss / n));
  s.min_ns = values_ns.front();
  s.max_ns = values_ns.back();
  s.p50_ns = E2eNearestRank(values_ns, 50);
  s.p90_ns = E2eNearestRank(values_ns, 90);
  s.p99_ns = E2eNearestRank(values_ns, 99);
  return s;
}

std::vector<int64_t> StageValues(const std::vector<E2eFrameRow>& rows, const std::string& name) {
  std::vector<int64_t> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    auto s = StagesOf(r);
    if (!s) continue;
    if (name == "Total") out.push_back(s->total_ns);
    if (name == "Capture") out.push_back(s->capture_ns);
    if (name == "Queue") out.push_back(s->queue_ns);
    if (name == "Preproc") out.push_back(s->preproc_ns);
    if (name == "Inference") out.push_back(s->inference_ns);
    if (name == "Postproc") out.push_back(s->postproc_ns);
    if (name == "DecisionToAlert") out.push_back(s->decision_to_alert_ns);
    if (name == "DecisionToEdge" && s->decision_to_edge_ns >= 0) {
      out.push_back(s->decision_to_edge_ns);
    }
  }
  return out;
}

std::string FormatE2eStatistics(const std::vector<E2eFrameRow>& rows, const E2eRunFacts& facts) {
  std::string out;
  out += fmt::format("rtpulse e2e: scenario {} ({})\n", facts.scenario, facts.configuration);
  out += fmt::format("Source: {} (capture timestamp: {})\n", facts.source, facts.timestamp_source);
  out += fmt::format("Model: {}\n", facts.model);
  out += fmt::format("Backend: {}\n", facts.backend_name);
  out += fmt::format("Backend why: {}\n", facts.backend_why);
  std::string used;
  if (facts.backend_threads >= 0) {
    used = std::to_string(facts.backend_threads);
  } else if (facts.workers_seen >= 0) {
    used = fmt::format(
        "{} (the inference thread and {} worker thread(s) of the backend seen in "
        "/proc/self/task)",
        facts.workers_seen + 1, facts.workers_seen);
  } else {
    used = "unknown (the runtime decides)";
  }
  out += fmt::format("Threads: asked {}, used {}\n", facts.threads_asked, used);
  if (facts.mode == "periodic") {
    out += fmt::format("Mode: periodic at {:g} frames/s, deadline {} ms\n", facts.fps,
                       E2eMsText(facts.deadline_ns));
  } else {
    out += facts.deadline_ns > 0
               ? fmt::format("Mode: back-to-back, deadline {} ms\n", E2eMsText(facts.deadline_ns))
               : std::string("Mode: back-to-back, no deadline\n");
  }
  out += "\n";
  out +=
      "Per stage, ms (mean and std rounded to whole ns; std: population, divisor n; "
      "percentiles: nearest rank)\n";
  out += fmt::format("{:<16} {:>7} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "Stage",
                     "Count", "Mean", "Std", "Min", "P50", "P90", "P99", "Max");
  for (const char* name : kE2eStageNames) out += E2eStatsLine(name, StageValues(rows, name));
  out += "\n";
  if (const auto fps = E2eThroughputFps(rows); !fps) {
    out +=
        fmt::format("Throughput: n/a ({} frame(s) recorded: a rate needs 2 alerts)\n", rows.size());
  } else {
    out += fmt::format(
        "Throughput: {:.3f} frames/s ({} intervals between the {} frames' alerts in {} ns)\n", *fps,
        rows.size() - 1, rows.size(), rows.back().alert_ns - rows.front().alert_ns);
  }
  uint64_t dropped_in_rows = 0;
  uint64_t lost_in_rows = 0;
  uint64_t misses_in_rows = 0;
  for (const auto& r : rows) {
    dropped_in_rows += r.dropped_before;
    lost_in_rows += r.lost_before;
    misses_in_rows += r.miss ? 1 : 0;
  }
  out += fmt::format("Frames: {} recorded, {} released\n", rows.size(), facts.released);
  out += fmt::format(
      "Dropped: {} (released, never processed; {} after the last recorded frame)\n", facts.dropped,
      facts.dropped >= dropped_in_rows ? std::to_string(facts.dropped - dropped_in_rows)
                                       : std::string("? (fewer than the frames' dropped_before)"));
  out += fmt::format("Lost: {} (the driver's sequence gaps)\n", facts.lost);
  out += facts.deadline_ns > 0
             ? fmt::format("Misses: {} (Total above the deadline)\n", facts.misses)
             : std::string("Misses: not counted (no deadline; give --deadline or --fps)\n");
  out += fmt::format("Loopback timeouts: {}\n", facts.loopback_timeouts);
  if ((facts.deadline_ns > 0 && misses_in_rows != facts.misses) || lost_in_rows > facts.lost) {
    out += fmt::format(
        "warning: the frames hold {} misses and {} lost where the run counted {} "
        "and {}\n",
        misses_in_rows, lost_in_rows, facts.misses, facts.lost);
  }
  uint64_t stamped_after_read = 0;
  for (const auto& r : rows) stamped_after_read += r.capture_ns > r.read_end_ns ? 1 : 0;
  if (stamped_after_read > 0) {
    out += fmt::format(
        "Capture stamps after the read's end: {} frames (their Capture, and Total, are negative "
        "or short by that much: the source's timestamp ({}) lies after rtpulse's clock read, "
        "shown as measured, not clamped)\n",
        stamped_after_read, facts.timestamp_source);
  }
  if (facts.interrupted) out += "Interrupted: yes (the frames before the signal)\n";
  if (facts.source_ended) out += "Source ended: yes (a finite source ran out)\n";
  out +=
      "\nTotal = alert - capture = Capture + Queue + Preproc + Inference + Postproc + "
      "DecisionToAlert (docs/e2e.md)\n";
  for (const auto& n : facts.notes) out += "note: " + n + "\n";
  return out;
}

Status WriteE2eStatistics(const std::string& path, const std::vector<E2eFrameRow>& rows,
                          const E2eRunFacts& facts) {
  if (Status s = E2eCheckRows(rows); !s) return s;
  return WriteFileAtomic(path, FormatE2eStatistics(rows, facts));
}

}  // namespace rtpulse::results
