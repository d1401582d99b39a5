#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "measure/gpio.h"

// The last stage of `rtpulse e2e` (docs/e2e.md, "Actuation"): the decision drives an alert,
// and a loopback input, when wired, closes the chain with the kernel's own edge timestamp.
namespace rtpulse::e2e {

enum class AlertKind { kNone, kStdout, kFile, kGpio };

/// --alert: "none", "stdout", "file:PATH", "gpio:CHIP:LINE"; usage error otherwise.
struct AlertSpec {
  AlertKind kind = AlertKind::kNone;
  std::string target;  ///< PATH, or the gpio spec text.
  std::string text;
};
Expected<AlertSpec> ParseAlertSpec(std::string_view text);

/// Drives the alert. Set() is called once per frame with the frame's decision; a GPIO sink
/// writes the line on every change only (an unchanged level is no edge), a file or stdout
/// sink writes one line per change: "<monotonic_ns> <frame> obstacle|clear".
class AlertSink {
 public:
  virtual ~AlertSink() = default;
  virtual Status Set(bool obstacle, uint64_t frame, int64_t now_ns) = 0;
  virtual std::string Describe() const = 0;
};
/// Opens the sink (file created/truncated, GPIO line requested as output, low = clear).
Expected<std::unique_ptr<AlertSink>> OpenAlert(const AlertSpec& spec);

/// --loopback gpio:CHIP:LINE: an input wired to the alert line. After a change, WaitEdge
/// returns the kernel timestamp of the edge it caused (or nullopt when none came within
/// `timeout_ns`: counted, never guessed).
class Loopback {
 public:
  virtual ~Loopback() = default;
  virtual Expected<std::optional<int64_t>> WaitEdge(bool rising, int64_t timeout_ns) = 0;
  virtual std::string Describe() const = 0;
};
Expected<std::unique_ptr<Loopback>> OpenLoopback(std::string_view gpio_spec);

/// The GPIO sink and the loopback on lines already opened (OpenAlert and OpenLoopback use
/// them; tests give them scripted lines).
std::unique_ptr<AlertSink> MakeGpioAlert(std::unique_ptr<measure::GpioOutput> line);
std::unique_ptr<Loopback> MakeGpioLoopback(std::unique_ptr<measure::GpioEdgeInput> input);

}  // namespace rtpulse::e2e
