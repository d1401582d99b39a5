#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "core/command_runner.h"
#include "core/fs_root.h"
#include "monitor/source.h"

namespace rtpulse::monitor {

/// How long one vcgencmd call may take before it is killed (it answers in milliseconds; a
/// hung firmware mailbox must not stall the sampler).
inline constexpr std::chrono::milliseconds kVcgencmdTimeout{2000};

/// /sys/class/thermal/thermal_zone*/temp: `temp_zone<N>_<type>_c` (degrees C).
std::unique_ptr<Source> MakeThermalSource(const FsRoot& root);
/// cpufreq policies' scaling_cur_freq, one column per CPU: `cpu<N>_freq_mhz`.
std::unique_ptr<Source> MakeCpufreqSource(const FsRoot& root);
/// Throttling on any machine: `policy<N>_capped` (scaling_max_freq below cpuinfo_max_freq)
/// and `zone<N>_passive_trip` (temperature at or above the zone's lowest passive trip).
std::unique_ptr<Source> MakeLimitsSource(const FsRoot& root);
/// /proc/loadavg: load1, load5, load15.
std::unique_ptr<Source> MakeLoadSource(const FsRoot& root);
/// /proc/stat: cpu_busy_pct, cpu_steal_pct, cpu<N>_busy_pct, ctxt_per_s.
std::unique_ptr<Source> MakeCpuStatSource(const FsRoot& root);
/// /proc/meminfo: mem_used_mib (MemTotal - MemAvailable), mem_available_mib.
std::unique_ptr<Source> MakeMemorySource(const FsRoot& root);
/// /proc/interrupts summed over every line with one count per CPU: `irq_cpu<N>_per_s`.
std::unique_ptr<Source> MakeInterruptsSource(const FsRoot& root);
/// /proc/softirqs summed over every softirq: `softirq_cpu<N>_per_s`.
std::unique_ptr<Source> MakeSoftirqsSource(const FsRoot& root);
/// Raspberry Pi firmware through `vcgencmd`: get_throttled (raw + decoded "now" bits),
/// pmic_read_adc (Pi 5 board power, EXT5V input voltage) and measure_volts core. A call
/// that outlives `timeout` is killed and leaves that sample's cells empty.
std::unique_ptr<Source> MakeVcgencmdSource(const CommandRunner& runner,
                                           std::chrono::milliseconds timeout = kVcgencmdTimeout);

/// Every source above, in CSV column order.
std::vector<std::unique_ptr<Source>> DefaultSources(
    const FsRoot& root, const CommandRunner& runner,
    std::chrono::milliseconds vcgencmd_timeout = kVcgencmdTimeout);

}  // namespace rtpulse::monitor
