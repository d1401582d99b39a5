#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

// Real GPIO lines through the kernel's character device (libgpiod, Debian libgpiod-dev, as on
// Raspberry Pi OS): an output line rtpulse drives (e2e's alert, the wake driver of
// `latency --wake gpio`) and an input line whose edges the kernel timestamps (e2e's loopback,
// `latency --wake gpio`). An optional build component (RTPULSE_GPIO, ON where libgpiod is
// found); without it every Open is a resource error naming the package. docs/gpio.md.
namespace rtpulse::measure {

/// "gpio:CHIP:LINE": CHIP is gpiochipN, /dev/gpiochipN or the chip's label (e.g. gpio-sim's
/// "gpio-sim.0-node0", the Pi 5's "pinctrl-rp1"); LINE is the line offset or its name.
struct GpioLineSpec {
  std::string chip;
  std::string line;  ///< Offset (digits) or a line name.
  std::string text;  ///< As given.
};
/// Usage error naming the text and the form otherwise.
Expected<GpioLineSpec> ParseGpioLine(std::string_view text);

/// Whether this build has libgpiod.
bool GpioCompiledIn();

/// The chip's device path and the line's offset, found by name or label when given so.
/// Errors: no such chip (usage, lists the chips there are), no such line (usage), the device
/// not accessible (permission: resource, names the device and the group/udev fix).
struct GpioLineInfo {
  std::string device;  ///< /dev/gpiochipN
  std::string chip_label;
  unsigned offset = 0;
  std::string line_name;
  bool used = false;  ///< Held by another consumer.
  std::string consumer;
};
Expected<GpioLineInfo> ResolveGpioLine(const GpioLineSpec& spec);
/// "line 1 'wake' of /dev/gpiochip0 (rtpulse-sim)": how messages name a line.
std::string GpioLineName(const GpioLineInfo& info);
/// The resource error of a line held by another consumer (names it and the fix).
Error GpioLineInUse(const GpioLineSpec& spec, const GpioLineInfo& info);

/// An output line held for the object's lifetime (released, and left at its last value, by
/// the destructor). Open fails with a resource error naming the consumer when the line is in
/// use.
class GpioOutput {
 public:
  static Expected<std::unique_ptr<GpioOutput>> Open(const GpioLineSpec& spec,
                                                    const std::string& consumer, bool initial);
  virtual ~GpioOutput() = default;
  /// One ioctl; no allocation (safe in the RT loop).
  virtual Status Set(bool high) = 0;
  virtual const GpioLineInfo& info() const = 0;
};

enum class GpioEdges { kRising, kFalling, kBoth };

/// One edge as the kernel saw it: the event's timestamp (CLOCK_MONOTONIC, taken by the kernel
/// in the line's interrupt handler).
struct GpioEdge {
  int64_t kernel_ns = 0;
  bool rising = false;
};

/// An input line requested for edge events.
class GpioEdgeInput {
 public:
  static Expected<std::unique_ptr<GpioEdgeInput>> Open(const GpioLineSpec& spec,
                                                       const std::string& consumer,
                                                       GpioEdges edges);
  virtual ~GpioEdgeInput() = default;
  /// The event file descriptor (poll/epoll for readability, then Read).
  virtual int fd() const = 0;
  /// Blocks until an edge; no allocation (safe in the RT loop).
  virtual Expected<GpioEdge> Read() = 0;
  /// Waits up to `timeout_ns` (CLOCK_MONOTONIC) for an edge; nullopt on timeout.
  virtual Expected<std::optional<GpioEdge>> Wait(int64_t timeout_ns) = 0;
  virtual const GpioLineInfo& info() const = 0;
};

}  // namespace rtpulse::measure
