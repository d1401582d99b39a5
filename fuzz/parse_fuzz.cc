// The small parsers of command-line and file values: durations, times, rates, CPU lists,
// integers (core/parse.h) and the kernel's CPU lists and masks (sys/boot_params.h). One
// target per parser (RTPULSE_FUZZ_PARSER); errors are usage errors with printable text.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "check_error.h"
#include "core/parse.h"
#include "sys/boot_params.h"

namespace {

template <typename T>
void CheckParsed(const rtpulse::Expected<T>& parsed) {
  if (!parsed) rtpulse::fuzz::CheckRejection(parsed.error());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtpulse;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string_view parser = RTPULSE_FUZZ_PARSER;
  if (parser == "duration") {
    CheckParsed(ParseDurationNs(text));
    CheckParsed(ParseTimeNs(text));
    CheckParsed(ParseTimeNs(text, 1000));
    CheckParsed(ParseRateHz(text));
  } else if (parser == "cpu_list") {
    auto cpus = ParseCpuList(text);
    CheckParsed(cpus);
    if (cpus) {
      // The list written back reads as the same CPUs.
      auto again = ParseCpuList(FormatCpuList(*cpus));
      if (!again || *again != *cpus) fuzz::FuzzFail("FormatCpuList does not round-trip", text);
    }
    CheckParsed(sys::ParseKernelCpuList(text, 7));
    CheckParsed(sys::ParseIsolcpus(text, 7));
    CheckParsed(sys::ParseCpuMask(text));
  } else if (parser == "int") {
    CheckParsed(ParseInt(text, "value"));
    CheckParsed(ParseSignedInt(text, "value"));
    (void)SplitFields(text);
    (void)TrimBlanks(text);
  } else {
    fuzz::FuzzFail("unknown parser of this target", parser);
  }
  return 0;
}
