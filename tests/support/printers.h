#pragma once

#include <ostream>

#include "measure/wake_path.h"

namespace rtpulse::measure {

/// Lets GoogleTest print a WakePath by name in parameterised test names.
inline void PrintTo(WakePath path, std::ostream* os) {
  *os << WakePathName(path);
}

}  // namespace rtpulse::measure
