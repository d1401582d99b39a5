#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "load/load.h"

namespace rtpulse::load {

/// Several loads started and stopped together; the destructor stops whatever still runs, so
/// every exit path (normal end, signal, error, exception) kills every process group.
class LoadSet {
 public:
  explicit LoadSet(std::vector<LoadSpec> specs);
  ~LoadSet();
  LoadSet(const LoadSet&) = delete;
  LoadSet& operator=(const LoadSet&) = delete;

  /// Starts each load in turn; on the first failure stops the ones already running.
  Status Start();
  void Stop();
  /// One report per load, in SPEC order.
  std::vector<LoadReport> Reports() const;
  const std::vector<std::unique_ptr<Load>>& loads() const { return loads_; }

 private:
  std::vector<std::unique_ptr<Load>> loads_;
};

/// The end-of-run table: load, cpus, achieved rate, MB/s, CPU busy %, then warnings.
std::string FormatReportTable(const std::vector<LoadReport>& reports);

}  // namespace rtpulse::load
