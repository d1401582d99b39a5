#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace rtpulse {

/// Writes `content` to `path` atomically: a temporary file in the same folder (handed over to
/// the user who ran sudo, core/file_owner.h), fsync, then rename over the target. A reader
/// (or a crash) sees the old file or the new one, never half. A permission or read-only
/// failure is `ExitCode::kResource` with the fix (core/file_owner.h `WriteError`). A path that
/// names a device, FIFO or terminal (`--json /dev/stdout`, `/dev/null`) is written in place:
/// renaming over it would replace the device node itself.
Status WriteFileAtomic(const std::string& path, std::string_view content);

/// An output option's file: "" writes nothing, "-" writes `content` to standard output, any
/// other path is written atomically (WriteFileAtomic).
Status WriteOutput(const std::string& path, std::string_view content);

/// Checks up front that `path` can be created (its folder exists and is writable), so a run
/// fails before measuring rather than after. Does not create the file. A folder this user may
/// not write is `ExitCode::kResource` (missing privilege), with the fix; a missing folder or
/// a folder given as the file is `ExitCode::kUsage`.
Status CheckWritable(const std::string& path);

/// Checks a results folder (--out) before anything runs: new or empty, and creatable or
/// writable. Does not create it. Errors name the folder and the fix: a usage error, or
/// missing privilege (`ExitCode::kResource`) for a folder this user may not create.
Status CheckOutputFolder(const std::string& dir);

}  // namespace rtpulse
