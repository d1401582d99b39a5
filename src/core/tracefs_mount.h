// tracefs, mounted for the run when nobody has (docs/explain.md, "Tracefs"): tools like
// trace-cmd mount it themselves when run as root, and so does every traced rtpulse command.
#pragma once

#include <string>

namespace rtpulse {

/// Where rtpulse looks for tracefs, in this order.
inline constexpr const char* kTracefsDirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

/// When tracefs is mounted at none of kTracefsDirs and this process may mount it (root, or
/// CAP_SYS_ADMIN), mounts it at /sys/kernel/tracing and says so: the returned note is for the
/// run's notes. The mount is undone when this process exits (normally, which SIGINT and
/// SIGTERM become in rtpulse; never by a forked child). "" when nothing was mounted: already
/// mounted (also by an earlier call), no permission, or no tracefs in this kernel; the
/// caller's own "no tracefs" error says what to do then.
std::string MountTracefsIfAbsent();

/// Whether this process mounted tracefs (MountTracefsIfAbsent) and still holds it.
bool TracefsMountedByThisProcess();

}  // namespace rtpulse
