// The machine beside the latency: an info metric (rtpulse version, kernel, preemption model,
// board), the `check` audit as state gauges, and the monitor's latest readings as gauges
// (docs/fleet.md#metrics). Plain inputs, so export needs neither sys nor monitor.
#pragma once

#include <string>
#include <vector>

#include "export/exposition.h"

namespace rtpulse::exporter {

/// Appends rtpulse_system_info{...} 1 with `labels` (version, kernel_release, ...).
void AppendSystemInfo(const Labels& labels, std::vector<MetricFamily>& out);

/// One `check` finding: its stable id ("kernel.preemption"), area and status ("pass",
/// "warn", "fail" or "info").
struct CheckState {
  std::string id;
  std::string area;
  std::string status;
};

/// Appends rtpulse_check_status{check, area, status} for each check and each of the four
/// statuses: 1 for the one it has, 0 for the others (so an alert can test either), and
/// rtpulse_check_timestamp_seconds, when the audit ran (Unix time).
void AppendChecks(const std::vector<CheckState>& checks, double ran_at_unix_s,
                  std::vector<MetricFamily>& out);

/// One monitor column and its latest value (NaN: not available this time).
struct MonitorReading {
  std::string column;
  double value = 0;
};

/// Appends the monitor's readings as gauges in base units: rtpulse_temperature_celsius
/// {zone, type}, rtpulse_cpu_frequency_hertz{cpu}, rtpulse_throttled{condition} (Raspberry Pi
/// firmware "now" bits), rtpulse_frequency_capped{policy}, rtpulse_thermal_passive_trip{zone},
/// rtpulse_board_power_watts, rtpulse_voltage_volts{rail}, rtpulse_cpu_busy_ratio{cpu},
/// rtpulse_cpu_steal_ratio, rtpulse_memory_{used,available}_bytes,
/// rtpulse_{interrupts,softirqs}_per_second{cpu}, rtpulse_context_switches_per_second,
/// rtpulse_load_average{window}; any other column as rtpulse_monitor_<column>. A NaN reading
/// is left out (unknown, never a number), but its family is still described.
void AppendMonitorReadings(const std::vector<MonitorReading>& readings,
                           std::vector<MetricFamily>& out);

}  // namespace rtpulse::exporter
