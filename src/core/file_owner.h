#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

namespace rtpulse {

/// The user a root process writes its files for.
struct FileOwner {
  uid_t uid = 0;
  gid_t gid = 0;
};

/// Under `sudo rtpulse ...` (effective uid 0 with SUDO_UID and SUDO_GID set to numbers), the
/// user who ran sudo; otherwise nothing (files stay with whoever the process is). sudo is
/// there for SCHED_FIFO and mlockall, not to leave root-owned results the user cannot
/// delete or rewrite.
std::optional<FileOwner> InvokingUser();

/// Gives a file or folder this process created to `InvokingUser()`; a no-op when there is
/// none. Best effort: a filesystem without owners (vfat) keeps root's, and the write stands.
void HandOver(const std::string& path);
/// The same on an open file, before it is renamed into place.
void HandOver(int fd);

/// Creates `dir` and its missing parents, handing every folder it created over
/// (`HandOver`); existing folders are left as they are. A permission or read-only failure
/// or a full disk is `ExitCode::kResource` with the fix in the message (`WriteError`); any
/// other refusal (a file in the way, a path under /proc) is
/// `ExitCode::kUsage`.
Status CreateFolders(const std::string& dir);

/// The error for a failed write of `path` (`what`: "cannot write", "cannot create folder"):
/// `ExitCode::kResource` with the fix for EACCES, EPERM and EROFS (missing privilege) and
/// for ENOSPC and EDQUOT (no space left), `ExitCode::kFailure` for anything else.
Error WriteError(std::string_view what, const std::string& path, int err);

}  // namespace rtpulse
