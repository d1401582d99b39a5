#include "e2e/actuation.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/clock.h"
#include "core/file_owner.h"
#include "measure/gpio.h"

namespace rtpulse::e2e {
namespace {

constexpr std::string_view kAlertForms =
    "use none, stdout, file:PATH or gpio:CHIP:LINE (e.g. --alert gpio:gpiochip0:17; "
    "docs/e2e.md \"Actuation\")";

/// "<monotonic_ns> <frame> obstacle|clear\n" into `buf`; its length.
size_t FormatAlertLine(char* buf, size_t size, bool obstacle, uint64_t frame, int64_t now_ns) {
  const int n =
      std::snprintf(buf, size, "%lld %llu %s\n", static_cast<long long>(now_ns),
                    static_cast<unsigned long long>(frame), obstacle ? "obstacle" : "clear");
  return n > 0 ? std::min(static_cast<size_t>(n), size - 1) : 0;
}

/// stdout or a file: one line per change of the decision, written with one write(2) each so
/// that a reader (or a crash) sees every change at once. The state starts clear, as the GPIO
/// line starts low.
class LineAlert final : public AlertSink {
 public:
  LineAlert(int fd, bool owns, std::string path, std::string describe)
      : fd_(fd), owns_(owns), path_(std::move(path)), describe_(std::move(describe)) {}
  ~LineAlert() override {
    if (owns_ && fd_ >= 0) close(fd_);
  }
  Status Set(bool obstacle, uint64_t frame, int64_t now_ns) override {
    if (obstacle == state_) return Status::Ok();
    char line[96];
    const size_t len = FormatAlertLine(line, sizeof(line), obstacle, frame, now_ns);
    size_t done = 0;
    while (done < len) {
      const ssize_t n = write(fd_, line + done, len - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return WriteError("cannot write the alert to", path_, errno);
      done += static_cast<size_t>(n);
    }
    state_ = obstacle;
    return Status::Ok();
  }
  std::string Describe() const override { return describe_; }

 private:
  int fd_;
  bool owns_;
  std::string path_;
  std::string describe_;
  bool state_ = false;
};

class GpioAlert final : public AlertSink {
 public:
  explicit GpioAlert(std::unique_ptr<measure::GpioOutput> line) : line_(std::move(line)) {}
  Status Set(bool obstacle, uint64_t, int64_t) override {
    if (obstacle == state_) return Status::Ok();  // an unchanged level is no edge
    if (Status s = line_->Set(obstacle); !s) return s;
    state_ = obstacle;
    return Status::Ok();
  }
  std::string Describe() const override {
    const auto& i = line_->info();
    return fmt::format("gpio line {}{} of {} ({}), high = obstacle", i.offset,
                       i.line_name.empty() ? "" : " '" + i.line_name + "'", i.device, i.chip_label);
  }

 private:
  std::unique_ptr<measure::GpioOutput> line_;
  bool state_ = false;
};

class NoAlert final : public AlertSink {
 public:
  Status Set(bool, uint64_t, int64_t) override { return Status::Ok(); }
  std::string Describe() const override { return "none"; }
};

class GpioLoopback final : public Loopback {
 public:
  explicit GpioLoopback(std::unique_ptr<measure::GpioEdgeInput> input) : input_(std::move(input)) {}
  Expected<std::optional<int64_t>> WaitEdge(bool rising, int64_t timeout_ns) override {
    const int64_t deadline = MonotonicNs() + timeout_ns;
    for (;;) {
      const int64_t left = deadline - MonotonicNs();
      auto edge = input_->Wait(left > 0 ? left : 0);
      if (!edge) return edge.error();
      if (!edge->has_value()) return std::optional<int64_t>{};
      // Stale events go first: an edge of the other direction (a bounce, or the edge of an
      // earlier change that was given up on) or one older than the last edge returned.
      const measure::GpioEdge& e = **edge;
      if (e.rising != rising || e.kernel_ns < last_ns_) continue;
      last_ns_ = e.kernel_ns;
      return std::optional<int64_t>{e.kernel_ns};
    }
  }
  std::string Describe() const override {
    const auto& i = input_->info();
    return fmt::format("gpio line {}{} of {} ({})", i.offset,
                       i.line_name.empty() ? "" : " '" + i.line_name + "'", i.device, i.chip_label);
  }

 private:
  std::unique_ptr<measure::GpioEdgeInput> input_;
  int64_t last_ns_ = 0;
};

}  // namespace

Expected<AlertSpec> ParseAlertSpec(std::string_view text) {
  AlertSpec spec;
  spec.text = std::string(text);
  if (text == "none") return spec;
  if (text == "stdout") {
    spec.kind = AlertKind::kStdout;
    return spec;
  }
  if (text.rfind("file:", 0) == 0) {
    spec.kind = AlertKind::kFile;
    spec.target = std::string(text.substr(5));
    if (spec.target.empty()) {
      return UsageError(
          fmt::format("--alert '{}': file: needs a path, e.g. file:alerts.txt", text));
    }
    return spec;
  }
  if (text.rfind("gpio:", 0) == 0) {
    auto line = measure::ParseGpioLine(text);
    if (!line) return UsageError("--alert: " + line.error().message);
    spec.kind = AlertKind::kGpio;
    spec.target = line->text;
    return spec;
  }
  return UsageError(fmt::format("invalid --alert '{}': {}", text, kAlertForms));
}

std::unique_ptr<AlertSink> MakeGpioAlert(std::unique_ptr<measure::GpioOutput> line) {
  return std::make_unique<GpioAlert>(std::move(line));
}

std::unique_ptr<Loopback> MakeGpioLoopback(std::unique_ptr<measure::GpioEdgeInput> input) {
  return std::make_unique<GpioLoopback>(std::move(input));
}

Expected<std::unique_ptr<AlertSink>> OpenAlert(const AlertSpec& spec) {
  switch (spec.kind) {
    case AlertKind::kNone:
      return std::unique_ptr<AlertSink>(std::make_unique<NoAlert>());
    case AlertKind::kStdout:
      return std::unique_ptr<AlertSink>(
          std::make_unique<LineAlert>(STDOUT_FILENO, false, "standard output", "stdout"));
    case AlertKind::kFile: {
      const int fd = open(spec.target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == EISDIR)) {
        return UsageError(
            fmt::format("--alert {}: cannot create '{}': {} (give a path in an "
                        "existing folder)",
                        spec.text, spec.target, std::strerror(errno)));
      }
      if (fd < 0) return WriteError("cannot write", spec.target, errno);
      HandOver(fd);
      return std::unique_ptr<AlertSink>(
          std::make_unique<LineAlert>(fd, true, spec.target, "file " + spec.target));
    }
    case AlertKind::kGpio: {
      auto line = measure::ParseGpioLine(spec.target);
      if (!line) return UsageError("--alert: " + line.error().message);
      auto output = measure::GpioOutput::Open(*line, "rtpulse-e2e-alert", false);
      if (!output) return output.error();
      return MakeGpioAlert(std::move(*output));
    }
  }
  return UsageError(fmt::format("invalid --alert '{}': {}", spec.text, kAlertForms));
}

Expected<std::unique_ptr<Loopback>> OpenLoopback(std::string_view gpio_spec) {
  auto line = measure::ParseGpioLine(gpio_spec);
  if (!line) return UsageError("--loopback: " + line.error().message);
  auto input =
      measure::GpioEdgeInput::Open(*line, "rtpulse-e2e-loopback", measure::GpioEdges::kBoth);
  if (!input) return input.error();
  return MakeGpioLoopback(std::move(*input));
}

}  // namespace rtpulse::e2e
