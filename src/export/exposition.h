// The Prometheus text exposition format (0.0.4) and OpenMetrics 1.0.0, from one metric model
// (docs/fleet.md). No I/O here: `serve` answers scrapes with it, `--textfile` writes it for
// node_exporter's textfile collector.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rtpulse::exporter {

/// What a family is. Info families are written as OpenMetrics `info` and, in the text
/// format (which has no info type), as a gauge named `<name>_info` with the value 1.
enum class MetricType { kCounter, kGauge, kHistogram, kInfo };

struct Label {
  std::string name;
  std::string value;
};
using Labels = std::vector<Label>;

/// One sample line: the family's name plus `suffix` ("", "_total", "_bucket", "_sum",
/// "_count", "_info"), its labels, its value.
struct MetricSample {
  std::string suffix;
  Labels labels;
  double value = 0;
};

/// One metric family. `name` is the base name: without `_total` for a counter and without
/// `_info` for an info family (the samples carry those suffixes). `unit`, when not empty, is
/// the OpenMetrics unit and the last part of `name` ("seconds" for `..._seconds`).
struct MetricFamily {
  std::string name;
  std::string help;
  MetricType type = MetricType::kGauge;
  std::string unit;
  std::vector<MetricSample> samples;
};

enum class ExpositionFormat { kText, kOpenMetrics };

/// The format a scraper asked for in its Accept header: OpenMetrics when it accepts
/// `application/openmetrics-text` with a q-value at least that of `text/plain` (and above
/// 0), the text format otherwise (also for an empty or absent header, as Prometheus does).
ExpositionFormat NegotiateFormat(std::string_view accept);

/// The Content-Type of a response in `format`.
std::string_view ContentType(ExpositionFormat format);

/// Every family in `families`, in order, in `format`. OpenMetrics ends with `# EOF`.
std::string Render(const std::vector<MetricFamily>& families, ExpositionFormat format);

/// A sample value as both formats write it: integers exactly (to 2^53), other numbers in the
/// shortest form that reads back to the same double, and `+Inf`, `-Inf`, `NaN`.
std::string FormatValue(double value);

/// A label value with `\`, `"` and line feeds escaped as both formats require.
std::string EscapeLabelValue(std::string_view value);

/// True for a valid metric or label name ([a-zA-Z_:][a-zA-Z0-9_:]*; no ':' in label names).
bool ValidMetricName(std::string_view name);
bool ValidLabelName(std::string_view name);

/// `text` made into a valid label or metric name part: lower case, anything but letters and
/// digits turned into '_', and a leading digit prefixed with '_'.
std::string SanitizeName(std::string_view text);

}  // namespace rtpulse::exporter
