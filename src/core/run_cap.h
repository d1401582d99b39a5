#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

// RTPULSE_MAX_RUN_S (docs/cli.md, "Environment"): a test aid that caps how long a measuring
// command measures (latency and serve -D, a suite scenario's settle and measurement, a
// control configuration's jobs, an e2e scenario's frames), so that the README's command lines
// run as written in a test (tests/readme). A capped run says so in its warnings.
namespace rtpulse {

inline constexpr const char* kMaxRunEnv = "RTPULSE_MAX_RUN_S";

/// The cap in ns from the environment: nullopt when unset or empty; a usage error naming the
/// value when it is not a positive number of seconds.
Expected<std::optional<int64_t>> MaxRunNs();

/// The warning a capped run records: "RTPULSE_MAX_RUN_S=2: WHAT capped from ASKED to CAPPED (a
/// test aid: the run is shorter than asked)".
std::string MaxRunWarning(std::string_view what, std::string_view asked, std::string_view capped);
/// `ns` as the warnings write it: "2 s", "0.5 s".
std::string MaxRunSeconds(int64_t ns);

/// A run length of `duration_ns` (0: no end) capped to the cap, when one is set and the
/// length is longer; `asked` is how the warning names what was asked ("10m", "no end"),
/// `option` the option it came from. The warning goes to `notes`.
Status CapRunDuration(int64_t& duration_ns, std::string_view option, std::string_view asked,
                      std::vector<std::string>& notes);
/// `count` items of `item_ns` each (jobs of a period, frames at a rate) capped to the items
/// the cap's time holds (at least 1), when one is set; `option` and `unit` name them in the
/// warning ("--jobs", "jobs").
Status CapRunCount(uint64_t& count, double item_ns, std::string_view option, std::string_view unit,
                   std::vector<std::string>& notes);

}  // namespace rtpulse
