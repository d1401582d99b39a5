// What a scraper or a user hands rtpulse serve: the Accept header a client sends (content
// negotiation), the --listen address, and any text that ends up in a label value or a HELP
// line (a sensor's name, a warning). The exposition must stay one sample per line in both
// formats, and a label value must read back as it was.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check_error.h"
#include "export/exposition.h"
#include "export/http_server.h"

namespace {

using namespace rtpulse;

/// The value inside the first label="..." of `line`, unescaped as Prometheus reads it.
std::string FirstLabelValue(std::string_view line) {
  const size_t open = line.find("=\"");
  std::string value;
  for (size_t i = open + 2; i < line.size() && line[i] != '"'; ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      ++i;
      value += line[i] == 'n' ? '\n' : line[i];
    } else {
      value += line[i];
    }
  }
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)exporter::NegotiateFormat(text);
  if (auto listen = exporter::ParseListenAddress(text); !listen) {
    fuzz::CheckRejection(listen.error());
  }
  exporter::MetricFamily family;
  family.name = "fuzz_metric";
  family.help = std::string(text);
  family.samples.push_back({"", {{"label", std::string(text)}}, 1});
  for (const auto format :
       {exporter::ExpositionFormat::kText, exporter::ExpositionFormat::kOpenMetrics}) {
    const std::string out = exporter::Render({family}, format);
    // HELP, TYPE, the sample (and OpenMetrics' EOF): no input byte may start a line of its own.
    size_t lines = 0;
    size_t start = 0;
    std::string_view sample;
    while (start < out.size()) {
      const size_t end = out.find('\n', start);
      const std::string_view line(out.data() + start, end - start);
      if (!line.starts_with("# ") && !line.starts_with("fuzz_metric{")) {
        fuzz::FuzzFail("a rendered line is neither a descriptor nor the sample", line);
      }
      if (line.starts_with("fuzz_metric{")) sample = line;
      ++lines;
      start = end + 1;
    }
    const size_t want = format == exporter::ExpositionFormat::kText ? 3 : 4;
    if (lines != want) fuzz::FuzzFail("the exposition has the wrong number of lines", out);
    if (FirstLabelValue(sample) != text) fuzz::FuzzFail("a label value does not read back", out);
  }
  return 0;
}
