// rt-app per-thread logs: the wu_lat column (us), one row per phase.

#include "importers/import_internal.h"
#include "importers/line_reader.h"
#include "importers/number.h"

namespace rtpulse::importers::internal {

Expected<Imported> ImportRtApp(const std::string& path) {
  auto reader = LineReader::Open(path);
  if (!reader) return reader.error();
  Imported out;
  out.probes.push_back(NewProbe(0, -1));
  results::ProbeResult& probe = out.probes.front();
  size_t columns = 0;
  size_t wu_column = 0;
  std::string_view line;
  for (;;) {
    auto more = (*reader)->Next(line);
    if (!more) return more.error();
    if (!*more) break;
    const uint64_t n = (*reader)->line_number();
    const auto fields = Fields(line);
    if (fields.empty()) continue;
    if (line[0] == '#') {
      if (fields[0].first == "#idx") {
        columns = fields.size();
        for (size_t f = 0; f < fields.size(); ++f) {
          if (fields[f].first == "wu_lat") wu_column = f;
        }
        if (wu_column == 0) {
          return At(path, n, 1, "header has no wu_lat column", "give an rt-app log with wu_lat");
        }
      } else if (line.find("priority") != std::string_view::npos && probe.policy.empty()) {
        probe.policy = std::string(fields.size() > 3 ? fields[3].first : "");  // # Policy : X
      }
      continue;
    }
    if (columns == 0) {
      return At(path, n, 1, "data before the '#idx ... wu_lat' header",
                "give a whole rt-app log file (it starts with the header)");
    }
    if (fields.size() != columns) {
      const size_t col = fields.size() > columns ? fields[columns].second + 1 : line.size() + 1;
      return At(path, n, col,
                fmt::format("{} columns where the header has {}", fields.size(), columns),
                (*reader)->last_line_unterminated() ? "the last line is cut short; drop it"
                                                    : "every row needs all the header's columns");
    }
    const auto [text, col] = fields[wu_column];
    size_t pos = 0;
    int64_t ns = 0;
    if (ParseScaledNs(text, pos, 1000, ns) != NumberError::kNone || pos != text.size()) {
      return At(path, n, col + 1, fmt::format("wu_lat '{}' is not a number", text),
                "rt-app writes whole microseconds; the file is edited or corrupt");
    }
    probe.histogram.Record(ns);
    ++probe.periods_elapsed;
  }
  if (probe.histogram.count() == 0) {
    return At(path, (*reader)->line_number() + 1, 1, "no rows",
              "rt-app wrote no phase: use log_size as a number of MB so the log is flushed");
  }
  out.warnings.push_back(
      "rt-app wu_lat is the sum of the timer wake-up latencies of a phase, whole microseconds; "
      "one row per phase (the first phase has no timer wake-up before it: wu_lat 0)");
  return out;
}

}  // namespace rtpulse::importers::internal
