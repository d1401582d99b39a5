#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace rtpulse {

/// Decompresses gzip data (one or more concatenated members), e.g. /proc/config.gz.
/// Errors name `origin` (the file it came from).
Expected<std::string> Gunzip(std::string_view data, std::string_view origin);

/// Compresses `data` into one gzip member (tests build /proc/config.gz fixtures with it).
Expected<std::string> Gzip(std::string_view data);

}  // namespace rtpulse
