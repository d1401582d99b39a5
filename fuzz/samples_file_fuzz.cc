// The per-sample log reader (core/samples_file.h) through its public entry point,
// ReadSamplesFile(path, fn), whatever format versions it reads: a bad file is a usage error
// before the first record; a good one passes exactly `records` records to `fn`.

#include <cstddef>
#include <cstdint>

#include "check_error.h"
#include "core/samples_file.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtpulse;
  const std::string& path = fuzz::InputFile().Write(data, size);
  uint64_t calls = 0;
  int64_t sum = 0;
  auto summary = ReadSamplesFile(path, [&](const SampleRecord& record) {
    ++calls;
    sum += static_cast<int64_t>(record.seq & 0xFF);
  });
  if (!summary) {
    if (calls != 0) fuzz::FuzzFail("records were passed before the error", summary.error().message);
    fuzz::CheckRejection(summary.error());
    return 0;
  }
  if (summary->records != calls) {
    fuzz::FuzzFail("the summary's record count differs from the records passed", path);
  }
  return sum == -1 ? 1 : 0;
}
