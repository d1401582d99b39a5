// thermal_power_log.csv read back for the report's figures (report/monitor_log.h), and its
// timestamp parser: every row has one value per column; a file it cannot read is a note
// (the report goes on without the monitor figures), in printable text.

#include <cstddef>
#include <cstdint>
#include <string>

#include "check_error.h"
#include "fuzz_input.h"
#include "report/monitor_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtpulse;
  const std::string& path = fuzz::InputFile().Write(data, size);
  auto log = report::ReadMonitorLog(path);
  if (!log) {
    // Not a usage error by design: the report skips the monitor figures with this note.
    fuzz::CheckMessageIsPrintable(log.error().message);
  } else {
    const size_t rows = log->elapsed_s.size();
    if (log->realtime_ns.size() != rows) fuzz::FuzzFail("timestamps and rows differ", path);
    for (const auto& column : log->columns) {
      if (column.values.size() != rows)
        fuzz::FuzzFail("a column is not one value per row", column.name);
    }
    if (!log->scenario.empty() && log->scenario.size() != rows) {
      fuzz::FuzzFail("scenario cells and rows differ", path);
    }
  }
  (void)report::ParseUtcTimestampNs(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
