// The names of trace's enums (event.h, attribution.h), shared by every part of the module.
#include "trace/attribution.h"

namespace rtpulse::trace {

std::string_view CauseKindName(CauseKind kind) {
  switch (kind) {
    case CauseKind::kIrq:
      return "irq";
    case CauseKind::kSoftirq:
      return "softirq";
    case CauseKind::kThread:
      return "thread";
    case CauseKind::kWake:
      return "wake";
    case CauseKind::kIdle:
      return "idle";
    case CauseKind::kUnaccounted:
      return "unaccounted";
  }
  return "unaccounted";
}

std::string_view ChainKindName(ChainKind kind) {
  switch (kind) {
    case ChainKind::kUnknown:
      return "unknown";
    case ChainKind::kDirect:
      return "direct";
    case ChainKind::kDeferred:
      return "deferred";
    case ChainKind::kCrossCpu:
      return "cross-cpu";
    case ChainKind::kRunning:
      return "running";
  }
  return "unknown";
}

}  // namespace rtpulse::trace
