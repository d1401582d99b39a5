#include "export/machine_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace rtpulse::exporter {
namespace {

std::string Text(const std::vector<MetricFamily>& families) {
  return Render(families, ExpositionFormat::kText);
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(MachineMetricsTest, MonitorColumnsBecomeGaugesInBaseUnits) {
  const std::vector<MonitorReading> readings = {
      {"temp_zone0_cpu_thermal_c", 61.5},
      {"temp_zone1_c", 40},
      {"cpu2_freq_mhz", 2400},
      {"policy0_capped", 1},
      {"zone0_passive_trip", 0},
      {"throttled_raw", 0x50005},
      {"under_voltage_now", 1},
      {"soft_temp_limit_now", 0},
      {"pmic_power_w", 6.25},
      {"ext5v_v", 5.1},
      {"core_v", 0.72},
      {"cpu_busy_pct", 37.5},
      {"cpu1_busy_pct", 12.5},
      {"cpu_steal_pct", 2},
      {"ctxt_per_s", 1500},
      {"mem_used_mib", 512},
      {"irq_cpu3_per_s", 1000},
      {"softirq_cpu0_per_s", 250},
      {"load15", 0.5},
      {"mystery-col", 7},
  };
  std::vector<MetricFamily> out;
  AppendMonitorReadings(readings, out);
  const std::string t = Text(out);
  for (const char* line : {
           "rtpulse_temperature_celsius{zone=\"0\",type=\"cpu_thermal\"} 61.5",
           "rtpulse_temperature_celsius{zone=\"1\",type=\"\"} 40",
           "rtpulse_cpu_frequency_hertz{cpu=\"2\"} 2400000000",
           "rtpulse_frequency_capped{policy=\"0\"} 1",
           "rtpulse_thermal_passive_trip{zone=\"0\"} 0",
           "rtpulse_throttled_raw 327685",
           "rtpulse_throttled{condition=\"under_voltage\"} 1",
           "rtpulse_throttled{condition=\"soft_temp_limit\"} 0",
           "rtpulse_board_power_watts 6.25",
           "rtpulse_voltage_volts{rail=\"ext5v\"} 5.1",
           "rtpulse_voltage_volts{rail=\"core\"} 0.72",
           "rtpulse_cpu_busy_ratio{cpu=\"all\"} 0.375",
           "rtpulse_cpu_busy_ratio{cpu=\"1\"} 0.125",
           "rtpulse_cpu_steal_ratio 0.02",
           "rtpulse_context_switches_per_second 1500",
           "rtpulse_memory_used_bytes 536870912",
           "rtpulse_interrupts_per_second{cpu=\"3\"} 1000",
           "rtpulse_softirqs_per_second{cpu=\"0\"} 250",
           "rtpulse_load_average{window=\"15m\"} 0.5",
           "rtpulse_monitor_mystery_col 7",
       }) {
    EXPECT_TRUE(Has(t, line)) << line << "\n" << t;
  }
  // One family each, however many columns feed it.
  size_t throttled_types = 0;
  for (size_t at = 0; (at = t.find("# TYPE rtpulse_throttled gauge", at)) != std::string::npos;
       ++at) {
    ++throttled_types;
  }
  EXPECT_EQ(throttled_types, 1U);
}

TEST(MachineMetricsTest, UnknownReadingIsLeftOutButDescribed) {
  std::vector<MetricFamily> out;
  AppendMonitorReadings({{"pmic_power_w", std::nan("")}}, out);
  const std::string t = Text(out);
  EXPECT_NE(t.find("# TYPE rtpulse_board_power_watts gauge\n"), std::string::npos);
  EXPECT_EQ(t.find("\nrtpulse_board_power_watts "), std::string::npos) << t;
}

TEST(MachineMetricsTest, NumberedColumnWithoutANumberFallsBackToItsOwnName) {
  std::vector<MetricFamily> out;
  AppendMonitorReadings({{"cpuX_freq_mhz", 1}, {"temp_zoneA_c", 2}}, out);
  const std::string t = Text(out);
  EXPECT_TRUE(Has(t, "rtpulse_monitor_cpux_freq_mhz 1")) << t;
  EXPECT_TRUE(Has(t, "rtpulse_monitor_temp_zonea_c 2")) << t;
}

TEST(MachineMetricsTest, ChecksAreOneHotOverTheFourStatuses) {
  std::vector<MetricFamily> out;
  AppendChecks({{"kernel.preemption", "kernel", "fail"}, {"cpu.governor", "cpu", "pass"}}, 1.7e9,
               out);
  const std::string t = Text(out);
  for (const char* line : {
           "rtpulse_check_status{check=\"kernel.preemption\",area=\"kernel\",status=\"pass\"} 0",
           "rtpulse_check_status{check=\"kernel.preemption\",area=\"kernel\",status=\"warn\"} 0",
           "rtpulse_check_status{check=\"kernel.preemption\",area=\"kernel\",status=\"fail\"} 1",
           "rtpulse_check_status{check=\"kernel.preemption\",area=\"kernel\",status=\"info\"} 0",
           "rtpulse_check_status{check=\"cpu.governor\",area=\"cpu\",status=\"pass\"} 1",
           "rtpulse_check_timestamp_seconds 1700000000",
       }) {
    EXPECT_TRUE(Has(t, line)) << line << "\n" << t;
  }
}

TEST(MachineMetricsTest, SystemInfoIsOneSeriesValuedOne) {
  std::vector<MetricFamily> out;
  AppendSystemInfo({{"version", "0.9"}, {"preemption_model", "PREEMPT_RT"}}, out);
  EXPECT_EQ(Render(out, ExpositionFormat::kOpenMetrics),
            "# TYPE rtpulse_system info\n"
            "# HELP rtpulse_system The machine and rtpulse: version, kernel release, preemption "
            "model, board\n"
            "rtpulse_system_info{version=\"0.9\",preemption_model=\"PREEMPT_RT\"} 1\n# EOF\n");
}

}  // namespace
}  // namespace rtpulse::exporter
