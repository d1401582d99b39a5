// The suite file parser (docs/suite-config.md): ParseSuiteToml on arbitrary text, with the
// CPUs of a four-CPU machine. Errors are usage errors "FILE:LINE:COL: ..." (a load this
// machine cannot run, such as stress-ng not installed, is a resource error by design).

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "check_error.h"
#include "suite/suite_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtpulse;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::vector<int> kCpus = {0, 1, 2, 3};
  auto config = suite::ParseSuiteToml(text, "fuzz.toml", kCpus);
  if (!config) fuzz::CheckRejection(config.error(), /*resource_ok=*/true);
  return 0;
}
