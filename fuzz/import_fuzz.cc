// One importer of `rtpulse import` (docs/import.md) on arbitrary bytes: the file goes through
// ImportFile, the entry point of the command, with the format forced (RTPULSE_FUZZ_FORMAT,
// one target per format) or detected ("auto": DetectFormat first, as without --format).

#include <cstddef>
#include <cstdint>
#include <string>

#include "check_error.h"
#include "fuzz_input.h"
#include "importers/import.h"

namespace {

class CountingConsumer : public rtpulse::importers::SampleConsumer {
 public:
  void Add(const rtpulse::importers::TimedSample& sample) override {
    ++count;
    last_latency_ns = sample.latency_ns;
  }
  uint64_t count = 0;
  int64_t last_latency_ns = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtpulse;
  const std::string& path = fuzz::InputFile().Write(data, size);
  importers::ImportOptions options;
  const std::string format = RTPULSE_FUZZ_FORMAT;
  if (format != "auto") {
    const auto forced = importers::FormatFromName(format);
    if (!forced) fuzz::FuzzFail("unknown format of this target", format);
    options.format = *forced;
  }
  options.threads = 1;
  CountingConsumer consumer;
  auto imported = importers::ImportFile(path, options, &consumer);
  if (!imported) {
    fuzz::CheckRejection(imported.error());
    return 0;
  }
  if (imported->time_ordered && imported->samples_streamed != consumer.count) {
    fuzz::FuzzFail("samples_streamed differs from the samples passed to the consumer", format);
  }
  for (const auto& warning : imported->warnings) fuzz::CheckMessageIsPrintable(warning);
  return 0;
}
