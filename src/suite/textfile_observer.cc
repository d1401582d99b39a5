#include "suite/textfile_observer.h"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

#include "export/textfile.h"
#include "suite/latency_record.h"

namespace rtpulse::suite {

TextfileObserver::TextfileObserver(measure::RunObserver& inner, std::string dir,
                                   results::LatencyRun facts)
    : inner_(inner), dir_(std::move(dir)), run_(std::move(facts)) {}

void TextfileObserver::OnPathStart(size_t path_index, measure::WakePath path) {
  inner_.OnPathStart(path_index, path);
}

bool TextfileObserver::WantsTicks() const {
  return inner_.WantsTicks();
}

void TextfileObserver::OnTick(const std::vector<measure::LiveProbe>& probes, int64_t elapsed_ns) {
  inner_.OnTick(probes, elapsed_ns);
}

void TextfileObserver::OnStatsRequest(const std::vector<measure::LiveProbe>& probes,
                                      measure::StatsRequest request) {
  inner_.OnStatsRequest(probes, request);
}

void TextfileObserver::OnCheckpoint(size_t path_index, const measure::PathRecord& snapshot) {
  if (run_.paths.size() <= path_index) run_.paths.resize(path_index + 1);
  run_.paths[path_index] = ToPathRun(snapshot);  // a copy: the engine reuses it
  Write("running");
}

void TextfileObserver::Failed() {
  Write("failed");
}

void TextfileObserver::Write(const char* status) {
  const double now = static_cast<double>(ClockNs(CLOCK_REALTIME)) / 1e9;
  const exporter::RunInfo info{"latency", status, static_cast<double>(run_.start_realtime_ns) / 1e9,
                               now};
  if (Status s = exporter::WriteTextfile(dir_, exporter::LatencyRunFamilies(run_, info));
      !s && !warned_) {
    warned_ = true;
    fmt::print(stderr, "rtpulse: warning: --textfile: {} (the run goes on)\n", s.error().message);
  }
}

}  // namespace rtpulse::suite
