// tracefs, mounted for the run when nobody has (docs/explain.md, "Tracefs"): tools like
// trace-cmd mount it themselves when run as root, and so does every traced rtpulse command.
#pragma once

#include <string>

namespace rtpulse {

/// Where rtpulse looks for tracefs, in this order.
inline constexpr const char* kTracefsDirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

/// When tracefs is mounted at none of kTracefsDirs and this process may mount it (root, or
/// CAP_SYS_ADMIN), mounts it at /sys/kernel/tracing. The mount is undone when this process
/// exits (normally, which SIGINT and SIGTERM become in rtpulse; never by a forked child).
/// Nothing happens when it is already mounted (also by an earlier call), without permission,
/// or without tracefs in this kernel; the caller's own "no tracefs" error says what to do.
void MountTracefsIfAbsent();

/// For the run's notes: what MountTracefsIfAbsent did, when this process mounted tracefs and
/// still holds it; "" otherwise.
std::string TracefsMountNote();

}  // namespace rtpulse
