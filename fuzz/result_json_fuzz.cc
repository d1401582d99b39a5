// The readers of rtpulse's own results (docs/results.md): ReadSuiteResult on a result.json
// or `latency --json` file, and the per-part readers LatencyRunFromJson and ExplainFromJson
// on whatever JSON the bytes hold. Errors are usage errors naming the file or field.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "check_error.h"
#include "fuzz_input.h"
#include "results/explain_result.h"
#include "results/suite_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtpulse;
  const std::string& path = fuzz::InputFile().Write(data, size);
  auto suite = results::ReadSuiteResult(path);
  if (!suite) fuzz::CheckRejection(suite.error());

  auto json = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  auto latency = results::LatencyRunFromJson(json);
  if (!latency) fuzz::CheckRejection(latency.error());
  auto explain = results::ExplainFromJson(json);
  if (!explain) fuzz::CheckRejection(explain.error());
  return 0;
}
