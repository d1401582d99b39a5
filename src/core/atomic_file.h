#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace rtpulse {

/// Writes `content` to `path` atomically: a temporary file in the same folder, fsync, then
/// rename over the target. A reader (or a crash) sees the old file or the new one, never half.
Status WriteFileAtomic(const std::string& path, std::string_view content);

/// Checks up front that `path` can be created (its folder exists and is writable), so a run
/// fails before measuring rather than after. Does not create the file.
Status CheckWritable(const std::string& path);

}  // namespace rtpulse
