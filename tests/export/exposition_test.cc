#include "export/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace rtpulse::exporter {
namespace {

std::vector<MetricFamily> Sample() {
  MetricFamily counter{
      "demo_misses", "Missed \"wake-ups\"\\ per CPU\nsecond line", MetricType::kCounter, "", {}};
  counter.samples.push_back({"_total", {{"cpu", "0"}}, 3});
  counter.samples.push_back({"_total", {{"cpu", "a\"b\\c\nd"}}, 0});
  MetricFamily histogram{"demo_latency_seconds", "Latency", MetricType::kHistogram, "seconds", {}};
  histogram.samples.push_back({"_bucket", {{"le", "1e-06"}}, 1});
  histogram.samples.push_back({"_bucket", {{"le", "+Inf"}}, 2});
  histogram.samples.push_back({"_sum", {}, 0.0000125});
  histogram.samples.push_back({"_count", {}, 2});
  MetricFamily info{"demo_system", "Facts", MetricType::kInfo, "", {}};
  info.samples.push_back({"_info", {{"version", "1.0"}}, 1});
  MetricFamily gauge{"demo_temperature_celsius", "Temperature", MetricType::kGauge, "celsius", {}};
  return {counter, histogram, info, gauge};
}

TEST(ExpositionTest, TextFormatNamesTheSamplesAndEscapesWhatItMust) {
  EXPECT_EQ(Render(Sample(), ExpositionFormat::kText),
            "# HELP demo_misses_total Missed \"wake-ups\"\\\\ per CPU\\nsecond line\n"
            "# TYPE demo_misses_total counter\n"
            "demo_misses_total{cpu=\"0\"} 3\n"
            "demo_misses_total{cpu=\"a\\\"b\\\\c\\nd\"} 0\n"
            "# HELP demo_latency_seconds Latency\n"
            "# TYPE demo_latency_seconds histogram\n"
            "demo_latency_seconds_bucket{le=\"1e-06\"} 1\n"
            "demo_latency_seconds_bucket{le=\"+Inf\"} 2\n"
            "demo_latency_seconds_sum 1.25e-05\n"
            "demo_latency_seconds_count 2\n"
            "# HELP demo_system_info Facts\n"
            "# TYPE demo_system_info gauge\n"
            "demo_system_info{version=\"1.0\"} 1\n"
            "# HELP demo_temperature_celsius Temperature\n"
            "# TYPE demo_temperature_celsius gauge\n");
}

TEST(ExpositionTest, OpenMetricsNamesTheFamiliesWithUnitsAndEndsWithEof) {
  EXPECT_EQ(Render(Sample(), ExpositionFormat::kOpenMetrics),
            "# TYPE demo_misses counter\n"
            "# HELP demo_misses Missed \\\"wake-ups\\\"\\\\ per CPU\\nsecond line\n"
            "demo_misses_total{cpu=\"0\"} 3\n"
            "demo_misses_total{cpu=\"a\\\"b\\\\c\\nd\"} 0\n"
            "# TYPE demo_latency_seconds histogram\n"
            "# UNIT demo_latency_seconds seconds\n"
            "# HELP demo_latency_seconds Latency\n"
            "demo_latency_seconds_bucket{le=\"1e-06\"} 1\n"
            "demo_latency_seconds_bucket{le=\"+Inf\"} 2\n"
            "demo_latency_seconds_sum 1.25e-05\n"
            "demo_latency_seconds_count 2\n"
            "# TYPE demo_system info\n"
            "# HELP demo_system Facts\n"
            "demo_system_info{version=\"1.0\"} 1\n"
            "# TYPE demo_temperature_celsius gauge\n"
            "# UNIT demo_temperature_celsius celsius\n"
            "# HELP demo_temperature_celsius Temperature\n"
            "# EOF\n");
}

TEST(ExpositionTest, EmptyListIsEmptyTextAndABareEof) {
  EXPECT_EQ(Render({}, ExpositionFormat::kText), "");
  EXPECT_EQ(Render({}, ExpositionFormat::kOpenMetrics), "# EOF\n");
}

TEST(ExpositionTest, ValuesAreExactIntegersOrShortestRoundTrip) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(-0.0), "0");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(-7), "-7");
  EXPECT_EQ(FormatValue(9007199254740992.0), "9007199254740992");  // 2^53, exact
  EXPECT_EQ(FormatValue(1e-6), "1e-06");
  EXPECT_EQ(FormatValue(0.00125), "0.00125");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(1.5e300), "1.5e+300");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
  for (double v : {1e-6, 1.25e-06, 0.0032, 0.1, 123.456, 6.02e23}) {
    EXPECT_EQ(std::stod(FormatValue(v)), v) << v;
  }
}

TEST(ExpositionTest, NegotiationPrefersOpenMetricsOnlyWhenAskedAtLeastAsMuch) {
  // Prometheus 2.42's scrape Accept header.
  EXPECT_EQ(NegotiateFormat("application/openmetrics-text;version=1.0.0,application/"
                            "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,"
                            "*/*;q=0.1"),
            ExpositionFormat::kOpenMetrics);
  EXPECT_EQ(NegotiateFormat(""), ExpositionFormat::kText);
  EXPECT_EQ(NegotiateFormat("*/*"), ExpositionFormat::kText);
  EXPECT_EQ(NegotiateFormat("text/plain"), ExpositionFormat::kText);
  EXPECT_EQ(NegotiateFormat("application/openmetrics-text"), ExpositionFormat::kOpenMetrics);
  EXPECT_EQ(NegotiateFormat("Application/OpenMetrics-Text; version=1.0.0"),
            ExpositionFormat::kOpenMetrics);
  EXPECT_EQ(NegotiateFormat("text/plain;q=0.9, application/openmetrics-text;q=0.5"),
            ExpositionFormat::kText);
  EXPECT_EQ(NegotiateFormat("application/openmetrics-text;q=0, text/plain;q=0.1"),
            ExpositionFormat::kText);
  EXPECT_EQ(NegotiateFormat("application/openmetrics-text;q=bogus"), ExpositionFormat::kText);
  EXPECT_EQ(NegotiateFormat("application/openmetrics-text;q=0.5, */*;q=0.5"),
            ExpositionFormat::kOpenMetrics);
  EXPECT_EQ(ContentType(ExpositionFormat::kText), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(ContentType(ExpositionFormat::kOpenMetrics),
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

TEST(ExpositionTest, NamesAreCheckedAndSanitized) {
  EXPECT_TRUE(ValidMetricName("rtpulse_latency_seconds"));
  EXPECT_TRUE(ValidMetricName("a:b_c1"));
  EXPECT_FALSE(ValidMetricName("1abc"));
  EXPECT_FALSE(ValidMetricName("a-b"));
  EXPECT_FALSE(ValidMetricName(""));
  EXPECT_TRUE(ValidLabelName("cpu"));
  EXPECT_FALSE(ValidLabelName("a:b"));
  EXPECT_EQ(SanitizeName("cpu-thermal"), "cpu_thermal");
  EXPECT_EQ(SanitizeName("3V3 rail"), "_3v3_rail");
  EXPECT_EQ(SanitizeName(""), "_");
  EXPECT_EQ(SanitizeName("é"), "__");
}

}  // namespace
}  // namespace rtpulse::exporter
