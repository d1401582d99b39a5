#include "measure/gpio.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#if RTPULSE_HAVE_GPIOD
#include <gpiod.h>
#include <poll.h>
#include <sys/utsname.h>

#include "core/clock.h"
#endif

namespace rtpulse::measure {
namespace {

constexpr std::string_view kGpioSpecForm =
    "use gpio:CHIP:LINE, CHIP being gpiochipN, /dev/gpiochipN or the chip's label and LINE the "
    "line's offset or name (e.g. gpio:gpiochip0:17, gpio:pinctrl-rp1:GPIO17)";

bool GpioAllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

}  // namespace

Expected<GpioLineSpec> ParseGpioLine(std::string_view text) {
  constexpr std::string_view kPrefix = "gpio:";
  if (text.substr(0, kPrefix.size()) != kPrefix) {
    return UsageError(fmt::format("invalid GPIO line '{}': {}", text, kGpioSpecForm));
  }
  const std::string_view rest = text.substr(kPrefix.size());
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) {
    return UsageError(fmt::format("invalid GPIO line '{}': {}", text, kGpioSpecForm));
  }
  GpioLineSpec spec;
  spec.chip = std::string(rest.substr(0, colon));
  spec.line = std::string(rest.substr(colon + 1));
  spec.text = std::string(text);
  if (GpioAllDigits(spec.line) && spec.line.size() > 6) {
    return UsageError(
        fmt::format("invalid GPIO line '{}': offset {} is too large", text, spec.line));
  }
  return spec;
}

std::string GpioLineName(const GpioLineInfo& info) {
  return info.line_name.empty()
             ? fmt::format("line {} of {} ({})", info.offset, info.device, info.chip_label)
             : fmt::format("line {} '{}' of {} ({})", info.offset, info.line_name, info.device,
                           info.chip_label);
}

Error GpioLineInUse(const GpioLineSpec& spec, const GpioLineInfo& info) {
  return ResourceError(fmt::format(
      "{}: {} is in use by '{}': stop that program (gpioinfo shows the consumers) or pick "
      "another line",
      spec.text, GpioLineName(info), info.consumer.empty() ? "the kernel" : info.consumer));
}

#if !RTPULSE_HAVE_GPIOD

bool GpioCompiledIn() {
  return false;
}

namespace {
Error GpioNotBuilt(const GpioLineSpec& spec) {
  return ResourceError(
      fmt::format("{}: this rtpulse was built without GPIO support: install libgpiod-dev (Debian, "
                  "scripts/install-deps) and rebuild with -DRTPULSE_GPIO=ON (docs/gpio.md)",
                  spec.text));
}
}  // namespace

Expected<GpioLineInfo> ResolveGpioLine(const GpioLineSpec& spec) {
  return GpioNotBuilt(spec);
}
Expected<std::unique_ptr<GpioOutput>> GpioOutput::Open(const GpioLineSpec& spec, const std::string&,
                                                       bool) {
  return GpioNotBuilt(spec);
}
Expected<std::unique_ptr<GpioEdgeInput>> GpioEdgeInput::Open(const GpioLineSpec& spec,
                                                             const std::string&, GpioEdges) {
  return GpioNotBuilt(spec);
}

#else

bool GpioCompiledIn() {
  return true;
}

namespace {

struct GpioChipCloser {
  void operator()(gpiod_chip* chip) const {
    if (chip != nullptr) gpiod_chip_close(chip);
  }
};
using GpioChipPtr = std::unique_ptr<gpiod_chip, GpioChipCloser>;

/// /dev/gpiochip* in number order.
std::vector<std::string> GpioChipDevices() {
  std::vector<std::pair<long, std::string>> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("gpiochip", 0) != 0 || !GpioAllDigits(std::string_view(name).substr(8)))
      continue;
    found.emplace_back(std::stol(name.substr(8)), entry.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [n, path] : found) out.push_back(std::move(path));
  return out;
}

Error GpioOpenError(const std::string& device, int err) {
  if (err == EACCES || err == EPERM) {
    return ResourceError(fmt::format(
        "cannot open {}: {}: run as root, or give your user the device's group (ls -l {}; "
        "Raspberry Pi OS: the 'gpio' group, sudo usermod -aG gpio $USER) or a udev rule "
        "(docs/gpio.md)",
        device, std::strerror(err), device));
  }
  return ResourceError(fmt::format("cannot open {}: {}", device, std::strerror(err)));
}

/// "gpiochip0 [label, 4 lines], ..." or how to get a chip when there is none.
std::string GpioDescribeChips() {
  const auto devices = GpioChipDevices();
  if (devices.empty()) {
    return "this machine has no GPIO chip (no /dev/gpiochip*): on a Raspberry Pi the RP1's "
           "chip is pinctrl-rp1; elsewhere a USB GPIO adapter, or the kernel's simulator "
           "(modprobe gpio-sim, configured through configfs: docs/gpio.md)";
  }
  std::string list;
  for (const auto& device : devices) {
    if (!list.empty()) list += ", ";
    GpioChipPtr chip(gpiod_chip_open(device.c_str()));
    if (!chip) {
      list += fmt::format("{} [{}]", device, std::strerror(errno));
      continue;
    }
    list += fmt::format("{} [{}, {} lines]", gpiod_chip_name(chip.get()),
                        gpiod_chip_label(chip.get()), gpiod_chip_num_lines(chip.get()));
  }
  return "chips here: " + list;
}

/// The chip named by `spec.chip`: gpiochipN, /dev/gpiochipN or a label.
Expected<GpioChipPtr> GpioOpenChip(const GpioLineSpec& spec) {
  std::string device;
  if (spec.chip.rfind("/dev/", 0) == 0) {
    device = spec.chip;
  } else if (spec.chip.rfind("gpiochip", 0) == 0 && GpioAllDigits(spec.chip.substr(8))) {
    device = "/dev/" + spec.chip;
  }
  if (!device.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(device, ec)) {
      return UsageError(
          fmt::format("{}: no GPIO chip {}; {}", spec.text, device, GpioDescribeChips()));
    }
    GpioChipPtr chip(gpiod_chip_open(device.c_str()));
    if (!chip) {
      if (errno == EACCES || errno == EPERM) return GpioOpenError(device, errno);
      return UsageError(fmt::format("{}: {} is not a GPIO chip ({}); {}", spec.text, device,
                                    std::strerror(errno), GpioDescribeChips()));
    }
    return chip;
  }
  // By label: every chip is opened and asked.
  for (const auto& candidate : GpioChipDevices()) {
    GpioChipPtr chip(gpiod_chip_open(candidate.c_str()));
    if (!chip) {
      if (errno == EACCES || errno == EPERM) return GpioOpenError(candidate, errno);
      continue;
    }
    if (spec.chip == gpiod_chip_label(chip.get())) return chip;
  }
  return UsageError(
      fmt::format("{}: no GPIO chip labelled '{}'; {}", spec.text, spec.chip, GpioDescribeChips()));
}

std::string GpioChipDevice(gpiod_chip* chip) {
  return fmt::format("/dev/{}", gpiod_chip_name(chip));
}

/// The line of `spec` on `chip`, by offset or name.
Expected<gpiod_line*> GpioFindLine(gpiod_chip* chip, const GpioLineSpec& spec) {
  const unsigned lines = gpiod_chip_num_lines(chip);
  if (GpioAllDigits(spec.line)) {
    const auto offset = static_cast<unsigned>(std::stoul(spec.line));
    if (offset >= lines) {
      return UsageError(fmt::format("{}: line {} does not exist: {} ({}) has {} lines, 0..{}",
                                    spec.text, offset, GpioChipDevice(chip), gpiod_chip_label(chip),
                                    lines, lines == 0 ? 0 : lines - 1));
    }
    gpiod_line* line = gpiod_chip_get_line(chip, offset);
    if (line == nullptr) {
      return ResourceError(fmt::format("{}: cannot read line {} of {}: {}", spec.text, offset,
                                       GpioChipDevice(chip), std::strerror(errno)));
    }
    return line;
  }
  gpiod_line* line = gpiod_chip_find_line(chip, spec.line.c_str());
  if (line != nullptr) return line;
  std::string names;
  unsigned named = 0;
  for (unsigned i = 0; i < lines && named < 12; ++i) {
    gpiod_line* l = gpiod_chip_get_line(chip, i);
    const char* name = l != nullptr ? gpiod_line_name(l) : nullptr;
    if (name == nullptr || *name == '\0') continue;
    names += (named++ == 0 ? "" : ", ") + std::string(name);
  }
  return UsageError(fmt::format(
      "{}: {} ({}) has no line named '{}'; {}", spec.text, GpioChipDevice(chip),
      gpiod_chip_label(chip), spec.line,
      named == 0 ? "its lines have no names: give the offset (0.." + std::to_string(lines - 1) + ")"
                 : "names there: " + names + (named < lines ? ", ..." : "")));
}

GpioLineInfo GpioInfoOf(gpiod_chip* chip, gpiod_line* line) {
  GpioLineInfo info;
  info.device = GpioChipDevice(chip);
  info.chip_label = gpiod_chip_label(chip);
  info.offset = gpiod_line_offset(line);
  const char* name = gpiod_line_name(line);
  info.line_name = name != nullptr ? name : "";
  info.used = gpiod_line_is_used(line);
  const char* consumer = gpiod_line_consumer(line);
  info.consumer = consumer != nullptr ? consumer : "";
  return info;
}

/// A chip and one requested line, released together.
struct GpioHeldLine {
  GpioChipPtr chip;
  gpiod_line* line = nullptr;
  GpioLineInfo info;
  ~GpioHeldLine() {
    if (line != nullptr && gpiod_line_is_requested(line)) gpiod_line_release(line);
  }
};

Expected<std::unique_ptr<GpioHeldLine>> GpioPrepare(const GpioLineSpec& spec) {
  auto chip = GpioOpenChip(spec);
  if (!chip) return chip.error();
  auto held = std::make_unique<GpioHeldLine>();
  held->chip = std::move(*chip);
  auto line = GpioFindLine(held->chip.get(), spec);
  if (!line) return line.error();
  held->info = GpioInfoOf(held->chip.get(), *line);
  if (held->info.used) return GpioLineInUse(spec, held->info);
  held->line = *line;
  return held;
}

Error GpioRequestError(const GpioLineSpec& spec, const GpioLineInfo& info, int err) {
  if (err == EBUSY) {
    GpioLineInfo now = info;
    now.consumer = "another program";
    return GpioLineInUse(spec, now);
  }
  return ResourceError(
      fmt::format("{}: cannot request {}: {}", spec.text, GpioLineName(info), std::strerror(err)));
}

/// GPIO v1 uAPI line events carry CLOCK_MONOTONIC timestamps since Linux 5.7 (CLOCK_REALTIME
/// before): older kernels are refused rather than measured on the wrong clock.
Status GpioCheckEventClock(const GpioLineSpec& spec) {
  utsname u{};
  if (uname(&u) != 0) return Status::Ok();
  int major = 0;
  int minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return Status::Ok();
  if (major > 5 || (major == 5 && minor >= 7)) return Status::Ok();
  return ResourceError(fmt::format(
      "{}: kernel {} timestamps GPIO edge events with CLOCK_REALTIME (CLOCK_MONOTONIC only "
      "from Linux 5.7): use a 5.7 or later kernel",
      spec.text, u.release));
}

class LibgpiodOutput final : public GpioOutput {
 public:
  explicit LibgpiodOutput(std::unique_ptr<GpioHeldLine> held) : held_(std::move(held)) {}
  Status Set(bool high) override {
    if (gpiod_line_set_value(held_->line, high ? 1 : 0) != 0) {
      return Failure(fmt::format("setting {} to {} failed: {}", GpioLineName(held_->info),
                                 high ? 1 : 0, std::strerror(errno)));
    }
    return Status::Ok();
  }
  const GpioLineInfo& info() const override { return held_->info; }

 private:
  std::unique_ptr<GpioHeldLine> held_;
};

class LibgpiodEdgeInput final : public GpioEdgeInput {
 public:
  LibgpiodEdgeInput(std::unique_ptr<GpioHeldLine> held, int fd) : held_(std::move(held)), fd_(fd) {}
  int fd() const override { return fd_; }
  Expected<GpioEdge> Read() override {
    gpiod_line_event event{};
    int rc;
    while ((rc = gpiod_line_event_read_fd(fd_, &event)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      return Failure(fmt::format("reading an edge of {} failed: {}", GpioLineName(held_->info),
                                 strerror(errno)));
    }
    GpioEdge edge;
    edge.kernel_ns = event.ts.tv_sec * kNsPerSec + event.ts.tv_nsec;
    edge.rising = event.event_type == GPIOD_LINE_EVENT_RISING_EDGE;
    // An edge is read after it happened: a timestamp ahead of CLOCK_MONOTONIC is another
    // clock (CLOCK_REALTIME on kernels before 5.7, or a driver's own) and is never used.
    if (edge.kernel_ns > MonotonicNs()) {
      return Failure(fmt::format(
          "{}: the kernel's edge timestamp ({} ns) is ahead of CLOCK_MONOTONIC: this kernel does "
          "not timestamp GPIO events on CLOCK_MONOTONIC (Linux 5.7 or later does)",
          GpioLineName(held_->info), edge.kernel_ns));
    }
    return edge;
  }
  Expected<std::optional<GpioEdge>> Wait(int64_t timeout_ns) override {
    const int64_t deadline = MonotonicNs() + std::max<int64_t>(timeout_ns, 0);
    for (;;) {
      const int64_t left = std::max<int64_t>(deadline - MonotonicNs(), 0);
      pollfd p{fd_, POLLIN, 0};
      const timespec ts = ToTimespec(left);
      const int rc = ppoll(&p, 1, &ts, nullptr);
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0) {
        return Failure(fmt::format("waiting for an edge of {} failed: {}",
                                   GpioLineName(held_->info), strerror(errno)));
      }
      if (rc == 0) return std::optional<GpioEdge>{};
      auto edge = Read();
      if (!edge) return edge.error();
      return std::optional<GpioEdge>{*edge};
    }
  }
  const GpioLineInfo& info() const override { return held_->info; }

 private:
  std::unique_ptr<GpioHeldLine> held_;
  int fd_ = -1;
};

}  // namespace

Expected<GpioLineInfo> ResolveGpioLine(const GpioLineSpec& spec) {
  auto chip = GpioOpenChip(spec);
  if (!chip) return chip.error();
  auto line = GpioFindLine(chip->get(), spec);
  if (!line) return line.error();
  return GpioInfoOf(chip->get(), *line);
}

Expected<std::unique_ptr<GpioOutput>> GpioOutput::Open(const GpioLineSpec& spec,
                                                       const std::string& consumer, bool initial) {
  auto held = GpioPrepare(spec);
  if (!held) return held.error();
  GpioHeldLine& h = **held;
  if (gpiod_line_request_output(h.line, consumer.c_str(), initial ? 1 : 0) != 0) {
    return GpioRequestError(spec, h.info, errno);
  }
  h.info.used = true;
  h.info.consumer = consumer;
  return std::unique_ptr<GpioOutput>(std::make_unique<LibgpiodOutput>(std::move(*held)));
}

Expected<std::unique_ptr<GpioEdgeInput>> GpioEdgeInput::Open(const GpioLineSpec& spec,
                                                             const std::string& consumer,
                                                             GpioEdges edges) {
  if (Status s = GpioCheckEventClock(spec); !s) return s.error();
  auto held = GpioPrepare(spec);
  if (!held) return held.error();
  GpioHeldLine& h = **held;
  int rc = 0;
  switch (edges) {
    case GpioEdges::kRising:
      rc = gpiod_line_request_rising_edge_events(h.line, consumer.c_str());
      break;
    case GpioEdges::kFalling:
      rc = gpiod_line_request_falling_edge_events(h.line, consumer.c_str());
      break;
    case GpioEdges::kBoth:
      rc = gpiod_line_request_both_edges_events(h.line, consumer.c_str());
      break;
  }
  if (rc != 0) return GpioRequestError(spec, h.info, errno);
  const int fd = gpiod_line_event_get_fd(h.line);
  if (fd < 0) return GpioRequestError(spec, h.info, errno);
  h.info.used = true;
  h.info.consumer = consumer;
  return std::unique_ptr<GpioEdgeInput>(std::make_unique<LibgpiodEdgeInput>(std::move(*held), fd));
}

#endif

}  // namespace rtpulse::measure
