#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "cli/live_view.h"
#include "suite/runner.h"

namespace rtpulse::cli {

/// What a scenario runner (`suite`, `control`) is doing, said on stderr so stdout keeps the
/// summary: one redrawn line on a terminal, a line every 10 s into a pipe, nothing with
/// --quiet. Messages (Say) are always said. A command gives its own settling and measuring
/// lines; the rest is shared.
class ScenarioProgress : public suite::Progress {
 public:
  explicit ScenarioProgress(LiveMode mode) : mode_(mode) {}

  void Scenario(size_t index, size_t count, const std::string& name, int64_t planned_ns,
                int64_t after_ns) override;
  void Settling(int64_t left_ns) override { Show(SettlingLine(left_ns)); }
  bool WantsTicks() const override { return mode_ != LiveMode::kOff; }
  void Measuring(const suite::LiveStatus& status) override { Show(MeasuringLine(status)); }
  void Done() override;
  void Say(const std::string& line) override;

 protected:
  virtual std::string SettlingLine(int64_t left_ns) const = 0;
  virtual std::string MeasuringLine(const suite::LiveStatus& status) const = 0;

  size_t index_ = 0;
  size_t count_ = 0;
  std::string name_;
  int64_t planned_ns_ = 0;
  int64_t after_ns_ = 0;

 private:
  void Show(const std::string& line);

  LiveMode mode_;
  int64_t last_plain_ns_ = -1;
  bool shown_ = false;
};

/// Off with --quiet; redrawn when stderr is a terminal; plain lines otherwise.
LiveMode StderrProgressMode(bool quiet);

/// How every scenario run's text ends, on `out`: each scenario's --explain table (with its
/// measured time), the run's warnings and "results: OUT_DIR"; stdout is flushed.
void PrintRunEnd(const suite::RunOutcome& outcome, const std::string& out_dir, std::FILE* out);

}  // namespace rtpulse::cli
