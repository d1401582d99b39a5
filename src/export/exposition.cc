#include "export/exposition.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "core/float_compare.h"

namespace rtpulse::exporter {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

/// The q-value of one media range's parameters ("version=1.0.0;q=0.5"): 1 when absent, 0 for
/// a value that is not a number in [0, 1] (RFC 9110: such a range is not acceptable).
double QValue(std::string_view params) {
  while (!params.empty()) {
    const size_t semi = params.find(';');
    std::string_view param = Trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
    if (param.size() < 2 || std::tolower(static_cast<unsigned char>(param[0])) != 'q' ||
        param[1] != '=') {
      continue;
    }
    const std::string value(Trim(param.substr(2)));
    char* end = nullptr;
    const double q = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0' || !(q >= 0 && q <= 1)) return 0;
    return q;
  }
  return 1;
}

/// HELP text: the text format escapes '\' and line feeds, OpenMetrics also '"'.
std::string EscapeHelp(std::string_view help, ExpositionFormat format) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && format == ExpositionFormat::kOpenMetrics) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string_view TypeName(MetricType type, ExpositionFormat format) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kInfo:
      return format == ExpositionFormat::kOpenMetrics ? "info" : "gauge";
  }
  return "unknown";
}

/// The name the HELP and TYPE lines carry: the text format has no families, so it names
/// the samples (`x_total`, `x_info`); OpenMetrics names the family.
std::string DescriptorName(const MetricFamily& family, ExpositionFormat format) {
  if (format == ExpositionFormat::kText) {
    if (family.type == MetricType::kCounter) return family.name + "_total";
    if (family.type == MetricType::kInfo) return family.name + "_info";
  }
  return family.name;
}

void AppendSample(const MetricFamily& family, const MetricSample& sample, std::string& out) {
  out += family.name;
  out += sample.suffix;
  if (!sample.labels.empty()) {
    out += '{';
    for (size_t i = 0; i < sample.labels.size(); ++i) {
      if (i > 0) out += ',';
      out += sample.labels[i].name;
      out += "=\"";
      out += EscapeLabelValue(sample.labels[i].value);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += FormatValue(sample.value);
  out += '\n';
}

}  // namespace

ExpositionFormat NegotiateFormat(std::string_view accept) {
  double openmetrics = 0;
  double text = 0;
  double wildcard = 0;
  while (!accept.empty()) {
    const size_t comma = accept.find(',');
    std::string_view range = Trim(accept.substr(0, comma));
    accept = comma == std::string_view::npos ? std::string_view{} : accept.substr(comma + 1);
    const size_t semi = range.find(';');
    const std::string_view type = Trim(range.substr(0, semi));
    const double q = semi == std::string_view::npos ? 1.0 : QValue(range.substr(semi + 1));
    if (EqualsNoCase(type, "application/openmetrics-text")) {
      openmetrics = std::max(openmetrics, q);
    } else if (EqualsNoCase(type, "text/plain")) {
      text = std::max(text, q);
    } else if (EqualsNoCase(type, "*/*") || EqualsNoCase(type, "text/*")) {
      wildcard = std::max(wildcard, q);
    }
  }
  text = std::max(text, wildcard);
  return openmetrics > 0 && openmetrics >= text ? ExpositionFormat::kOpenMetrics
                                                : ExpositionFormat::kText;
}

std::string_view ContentType(ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  constexpr double kExactInteger = 9007199254740992.0;  // 2^53
  if (ExactlyEqual(value, std::floor(value)) && std::fabs(value) <= kExactInteger) {
    return fmt::format("{}", static_cast<int64_t>(value));
  }
  return fmt::format("{}", value);
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

bool ValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool ok = std::isalpha(c) != 0 || c == '_' || c == ':' || (i > 0 && std::isdigit(c) != 0);
    if (!ok) return false;
  }
  return true;
}

bool ValidLabelName(std::string_view name) {
  return ValidMetricName(name) && name.find(':') == std::string_view::npos;
}

std::string SanitizeName(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 1);
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) != 0 && u < 0x80 ? static_cast<char>(std::tolower(u)) : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) != 0) out.insert(0, "_");
  return out;
}

std::string Render(const std::vector<MetricFamily>& families, ExpositionFormat format) {
  std::string out;
  for (const MetricFamily& family : families) {
    const std::string name = DescriptorName(family, format);
    if (format == ExpositionFormat::kOpenMetrics) {
      out += fmt::format("# TYPE {} {}\n", name, TypeName(family.type, format));
      if (!family.unit.empty()) out += fmt::format("# UNIT {} {}\n", name, family.unit);
      out += fmt::format("# HELP {} {}\n", name, EscapeHelp(family.help, format));
    } else {
      out += fmt::format("# HELP {} {}\n", name, EscapeHelp(family.help, format));
      out += fmt::format("# TYPE {} {}\n", name, TypeName(family.type, format));
    }
    for (const MetricSample& sample : family.samples) AppendSample(family, sample, out);
  }
  if (format == ExpositionFormat::kOpenMetrics) out += "# EOF\n";
  return out;
}

}  // namespace rtpulse::exporter
