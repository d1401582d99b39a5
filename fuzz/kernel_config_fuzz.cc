// The kernel config reader (core/kernel_config.h): strict (kernel verify), strict with
// conflicts rejected (fragments) and lenient (the audit, never fails) on the same bytes.
// Whatever the strict reader accepts, the lenient one reads the same way.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "check_error.h"
#include "core/kernel_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtpulse;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto strict = KernelConfig::Parse(text, "fuzz.config");
  auto fragment = KernelConfig::Parse(text, "fuzz.config", /*reject_conflicts=*/true);
  const KernelConfig lenient = KernelConfig::ParseLenient(text, "fuzz.config");
  if (!fragment) fuzz::CheckRejection(fragment.error());
  if (!strict) {
    fuzz::CheckRejection(strict.error());
    return 0;
  }
  // Entry by entry (not through Get, which drops one CONFIG_ prefix and so cannot find an
  // option the file spells CONFIG_CONFIG_X).
  const auto& a = strict->entries();
  const auto& b = lenient.entries();
  if (a.size() != b.size()) fuzz::FuzzFail("the lenient reader counts other options", "");
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].value != b[i].value || a[i].line != b[i].line) {
      fuzz::FuzzFail("the lenient reader reads another entry for", a[i].name);
    }
  }
  (void)strict->Get(text.substr(0, 32));
  (void)MajorMinor(strict->version());
  return 0;
}
