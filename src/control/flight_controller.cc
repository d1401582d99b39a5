#include "control/flight_controller.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <new>
#include <numbers>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/clock.h"
#include "core/memory_facts.h"

namespace rtpulse::control {
namespace {

constexpr double kFcTwoPi = 2 * std::numbers::pi;
constexpr double kFcDeg = std::numbers::pi / 180;
constexpr size_t kFcLineBytes = 64;

uint64_t FcSplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Uniform noise of standard deviation `std` for (seed, k, channel): a pure function.
double FcNoise(uint64_t seed, uint64_t k, uint64_t channel, double std) {
  uint64_t bits = FcSplitMix64(seed ^ FcSplitMix64(k * 8 + channel));
  double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
  return (2 * u - 1) * std * std::numbers::sqrt3;
}

/// One sinusoid of the manoeuvre: amplitude (rad), period (s), phase (rad).
struct FcWave {
  double amplitude, period_s, phase;
};
/// roll, pitch, yaw: each a sum of a slow and a faster sinusoid.
constexpr FcWave kFcManoeuvre[3][2] = {
    {{0.20, 5.0, 0.0}, {0.05, 1.3, 0.0}},
    {{0.15, 7.0, 0.5}, {0.04, 1.7, 0.0}},
    {{0.50, 11.0, 0.0}, {0.00, 1.0, 0.0}},
};

/// Angle and its rate of change for axis `axis` at time t.
std::pair<double, double> FcAngleAndRate(int axis, double t) {
  double angle = 0, rate = 0;
  for (const FcWave& w : kFcManoeuvre[axis]) {
    double omega = kFcTwoPi / w.period_s;
    angle += w.amplitude * std::sin(omega * t + w.phase);
    rate += w.amplitude * omega * std::cos(omega * t + w.phase);
  }
  return {angle, rate};
}

uint64_t FcFold(uint64_t sum, double value) {
  return (sum ^ std::bit_cast<uint64_t>(value)) * 0x100000001B3ULL;
}

double FcWrapPi(double a) {
  return std::remainder(a, kFcTwoPi);
}

double FcClamp(double v, double limit) {
  return limit > 0 ? std::clamp(v, -limit, limit) : v;
}

}  // namespace

// --- SyntheticImu ---------------------------------------------------------------------------

SyntheticImu::SyntheticImu(uint64_t seed, double dt_s) : seed_(seed), dt_s_(dt_s) {}

Attitude SyntheticImu::TrueAttitude(uint64_t k) const {
  double t = static_cast<double>(k) * dt_s_;
  return {FcAngleAndRate(0, t).first, FcAngleAndRate(1, t).first, FcAngleAndRate(2, t).first};
}

ImuSample SyntheticImu::TrueSample(uint64_t k) const {
  double t = static_cast<double>(k) * dt_s_;
  auto [phi, dphi] = FcAngleAndRate(0, t);
  auto [theta, dtheta] = FcAngleAndRate(1, t);
  auto [psi, dpsi] = FcAngleAndRate(2, t);
  (void)psi;
  ImuSample s;
  // Body rates from Z-Y-X Euler rates.
  s.gyro[0] = dphi - dpsi * std::sin(theta);
  s.gyro[1] = dtheta * std::cos(phi) + dpsi * std::sin(phi) * std::cos(theta);
  s.gyro[2] = -dtheta * std::sin(phi) + dpsi * std::cos(phi) * std::cos(theta);
  // Specific force when hovering in place: -g times the world's down axis in body axes.
  s.accel[0] = kGravity * std::sin(theta);
  s.accel[1] = -kGravity * std::sin(phi) * std::cos(theta);
  s.accel[2] = -kGravity * std::cos(phi) * std::cos(theta);
  return s;
}

AttitudeCommand SyntheticImu::Command(uint64_t k) const {
  AttitudeCommand c;
  c.attitude = TrueAttitude(k);
  ImuSample truth = TrueSample(k);
  for (size_t i = 0; i < 3; ++i) c.rate[i] = truth.gyro[i];
  return c;
}

ImuSample SyntheticImu::Sample(uint64_t k) const {
  ImuSample s = TrueSample(k);
  for (int i = 0; i < 3; ++i) {
    s.gyro[i] += kGyroBias[i] + FcNoise(seed_, k, static_cast<uint64_t>(i), kGyroNoiseStd);
    s.accel[i] += FcNoise(seed_, k, 3 + static_cast<uint64_t>(i), kAccelNoiseStd);
  }
  return s;
}

// --- MahonyFilter ---------------------------------------------------------------------------

MahonyFilter::MahonyFilter(double kp, double ki) : kp_(kp), ki_(ki) {}

void MahonyFilter::Reset() {
  q_[0] = 1;
  q_[1] = q_[2] = q_[3] = 0;
  integral_[0] = integral_[1] = integral_[2] = 0;
}

void MahonyFilter::Update(const ImuSample& imu, double dt_s) {
  double& q0 = q_[0];
  double& q1 = q_[1];
  double& q2 = q_[2];
  double& q3 = q_[3];
  double g[3] = {imu.gyro[0], imu.gyro[1], imu.gyro[2]};
  // Measured down direction: the accelerometer reads minus gravity.
  double d[3] = {-imu.accel[0], -imu.accel[1], -imu.accel[2]};
  double norm = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  if (norm > 0) {  // free fall: no gravity reference, gyro only
    for (double& c : d) c /= norm;
    // Estimated down direction: the world's z axis in body axes.
    double v[3] = {2 * (q1 * q3 - q0 * q2), 2 * (q0 * q1 + q2 * q3),
                   q0 * q0 - q1 * q1 - q2 * q2 + q3 * q3};
    double e[3] = {d[1] * v[2] - d[2] * v[1], d[2] * v[0] - d[0] * v[2], d[0] * v[1] - d[1] * v[0]};
    for (int i = 0; i < 3; ++i) {
      integral_[i] += ki_ * e[i] * dt_s;
      g[i] += kp_ * e[i] + integral_[i];
    }
  }
  // q' = q * (0, w) / 2
  double h = 0.5 * dt_s;
  double a = q0, b = q1, c = q2;
  q0 += h * (-b * g[0] - c * g[1] - q3 * g[2]);
  q1 += h * (a * g[0] + c * g[2] - q3 * g[1]);
  q2 += h * (a * g[1] - b * g[2] + q3 * g[0]);
  q3 += h * (a * g[2] + b * g[1] - c * g[0]);
  double qn = std::sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3);
  for (double& x : q_) x /= qn;
}

Attitude MahonyFilter::attitude() const {
  const double q0 = q_[0], q1 = q_[1], q2 = q_[2], q3 = q_[3];
  Attitude a;
  a.roll = std::atan2(2 * (q0 * q1 + q2 * q3), 1 - 2 * (q1 * q1 + q2 * q2));
  a.pitch = std::asin(std::clamp(2 * (q0 * q2 - q3 * q1), -1.0, 1.0));
  a.yaw = std::atan2(2 * (q0 * q3 + q1 * q2), 1 - 2 * (q2 * q2 + q3 * q3));
  return a;
}

// --- Pid ------------------------------------------------------------------------------------

Pid::Pid(const PidGains& gains) : gains_(gains) {}

void Pid::Reset() {
  integral_ = 0;
  previous_error_ = 0;
  first_ = true;
}

double Pid::Step(double error, double dt_s) {
  integral_ = FcClamp(integral_ + gains_.ki * error * dt_s, gains_.i_limit);
  double derivative = first_ ? 0 : gains_.kd * (error - previous_error_) / dt_s;
  first_ = false;
  previous_error_ = error;
  return FcClamp(gains_.kp * error + integral_ + derivative, gains_.out_limit);
}

// --- Mixer ----------------------------------------------------------------------------------

MotorOutputs MixQuadX(double throttle, double roll, double pitch, double yaw) {
  MotorOutputs out;
  double t = std::clamp(throttle, 0.0, 1.0);
  out.saturated = throttle < 0 || throttle > 1;
  const double part[4] = {-roll + pitch + yaw, roll - pitch + yaw, roll + pitch - yaw,
                          -roll - pitch - yaw};
  double scale = 1;
  for (double p : part) {
    if (t + p > 1) scale = std::min(scale, (1 - t) / p);
    if (t + p < 0) scale = std::min(scale, t / -p);
  }
  if (scale < 1) out.saturated = true;
  for (int i = 0; i < 4; ++i) out.motor[i] = std::clamp(t + scale * part[i], 0.0, 1.0);
  return out;
}

ControllerConfig ControllerConfig::Defaults(double dt_s) {
  ControllerConfig c;
  c.dt_s = dt_s;
  for (int axis = 0; axis < 2; ++axis) {
    c.angle[axis] = {.kp = 6.0, .ki = 0, .kd = 0, .i_limit = 0, .out_limit = 3.5};
    c.rate[axis] = {.kp = 0.15, .ki = 0.2, .kd = 0.002, .i_limit = 0.1, .out_limit = 0.5};
  }
  c.angle[2] = {.kp = 3.0, .ki = 0, .kd = 0, .i_limit = 0, .out_limit = 1.75};
  c.rate[2] = {.kp = 0.2, .ki = 0.1, .kd = 0, .i_limit = 0.1, .out_limit = 0.3};
  c.hover_throttle = 0.5;
  return c;
}

// --- Work set -------------------------------------------------------------------------------

Status CheckWorkSetFits(size_t bytes, const FsRoot& root, std::string_view as_given) {
  const auto available = MeminfoBytes(root, "MemAvailable");
  if (!available || bytes <= *available) return Status::Ok();
  const std::string asked = as_given.empty() ? fmt::format("{} bytes", bytes)
                                             : fmt::format("{} ({} bytes)", as_given, bytes);
  return UsageError(fmt::format(
      "--work-set {} is larger than the memory available ({} bytes = {} MiB, MemAvailable in "
      "/proc/meminfo); give a work set below {} bytes",
      asked, *available, *available / (1024 * 1024), *available));
}

FlightController::State::State(const ControllerConfig& c, uint64_t seed)
    : config(c),
      imu(seed, c.dt_s),
      angle{Pid(c.angle[0]), Pid(c.angle[1]), Pid(c.angle[2])},
      rate{Pid(c.rate[0]), Pid(c.rate[1]), Pid(c.rate[2])},
      scratch_angle{Pid(c.angle[0]), Pid(c.angle[1]), Pid(c.angle[2])},
      scratch_rate{Pid(c.rate[0]), Pid(c.rate[1]), Pid(c.rate[2])},
      checksum(FcSplitMix64(seed)) {}

void WorkSetUnmap::operator()(void* mapping) const {
  if (mapping != nullptr) munmap(mapping, bytes);
}

FlightController::FlightController(const ControllerConfig& config, uint64_t seed)
    : state_(config, seed), seed_(seed) {}

Status FlightController::SetWorkSet(size_t bytes, WorkSetMode mode) {
  if (bytes != 0 && (bytes < kFcLineBytes || bytes % kFcLineBytes != 0)) {
    return UsageError(fmt::format(
        "--work-set {} bytes is not a whole number of 64-byte cache lines; give 0 (none) or "
        "a multiple of 64, e.g. {}",
        bytes, (bytes / kFcLineBytes + 1) * kFcLineBytes));
  }
  const size_t n = bytes / kFcLineBytes;
  std::unique_ptr<WorkLine, WorkSetUnmap> mapped(nullptr, WorkSetUnmap{bytes});
  if (n > 0) {
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) {
      return ResourceError(
          fmt::format("cannot allocate a work set of {} bytes ({}); give a smaller --work-set",
                      bytes, std::strerror(errno)));
    }
    // Not inherited by the loads' forks (see work_set_), so never copy-on-write.
    madvise(memory, bytes, MADV_DONTFORK);
    mapped.reset(static_cast<WorkLine*>(memory));
  }
  WorkLine* lines = mapped.get();
  for (size_t i = 0; i < n; ++i) new (&lines[i]) WorkLine{};  // every page is touched here
  for (size_t i = 0; i < n; ++i) lines[i].next = i;
  // Sattolo's shuffle: a uniformly random permutation with a single cycle through all lines.
  uint64_t counter = FcSplitMix64(seed_ ^ 0x5A77010ULL);
  for (size_t i = n; i > 1; --i) {
    size_t j = static_cast<size_t>(FcSplitMix64(counter++) % (i - 1));
    std::swap(lines[i - 1].next, lines[j].next);
  }
  work_set_ = std::move(mapped);
  work_lines_ = n;
  mode_ = mode;
  return Status::Ok();
}

uint64_t FlightController::TouchWorkSet() {
  uint64_t sum = 0;
  size_t n = work_lines_;
  if (n == 0) return 0;
  WorkLine* lines = work_set_.get();
  if (mode_ == WorkSetMode::kStreaming) {
    for (size_t i = 0; i < n; ++i) sum += ++lines[i].visits;
  } else {
    uint64_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      WorkLine& line = lines[at];
      sum = sum * 31 + ++line.visits;
      at = line.next;  // the next load depends on this one
    }
    sum += at;
  }
  return sum;
}

namespace {

/// The cascade on the three axes: angle error -> rate setpoint (+ feedforward) -> torque.
void FcCascade(Pid* angle, Pid* rate, const Attitude& estimate, const ImuSample& imu,
               const AttitudeCommand& command, double dt, double* torque) {
  const double angle_error[3] = {command.attitude.roll - estimate.roll,
                                 command.attitude.pitch - estimate.pitch,
                                 FcWrapPi(command.attitude.yaw - estimate.yaw)};
  for (size_t axis = 0; axis < 3; ++axis) {
    double rate_sp = angle[axis].Step(angle_error[axis], dt) + command.rate[axis];
    torque[axis] = rate[axis].Step(rate_sp - imu.gyro[axis], dt);
  }
}

}  // namespace

double FlightController::ExtraPass(const ImuSample& imu, const AttitudeCommand& command) {
  State& s = state_;
  s.scratch_filter.Update(imu, s.config.dt_s);
  double torque[3];
  FcCascade(s.scratch_angle, s.scratch_rate, s.scratch_filter.attitude(), imu, command,
            s.config.dt_s, torque);
  return torque[0] + torque[1] + torque[2];
}

MotorOutputs FlightController::Step(uint64_t k) {
  State& s = state_;
  const double dt = s.config.dt_s;
  ImuSample imu = s.imu.Sample(k);
  s.filter.Update(imu, dt);
  s.estimate = s.filter.attitude();
  AttitudeCommand command = s.imu.Command(k);
  double torque[3];
  FcCascade(s.angle, s.rate, s.estimate, imu, command, dt, torque);
  MotorOutputs out = MixQuadX(s.config.hover_throttle, torque[0], torque[1], torque[2]);

  double extra = 0;
  for (uint32_t p = 0; p < s.extra_passes; ++p) extra += ExtraPass(imu, command);
  uint64_t touched = TouchWorkSet();

  uint64_t sum = s.checksum;
  for (double m : out.motor) sum = FcFold(sum, m);
  sum = FcFold(sum, s.estimate.roll);
  sum = FcFold(sum, s.estimate.pitch);
  sum = FcFold(sum, s.estimate.yaw);
  sum = (sum ^ (out.saturated ? 1 : 0) ^ touched) * 0x100000001B3ULL;
  if (s.extra_passes > 0) sum = FcFold(sum, extra);  // so the compiler cannot drop them
  s.checksum = sum;
  return out;
}

// --- Calibration ----------------------------------------------------------------------------

namespace {

constexpr int kFcCalibrationWarmup = 50;
constexpr int kFcCalibrationRuns = 201;
constexpr int kFcCalibrationMinRuns = 5;
/// One measurement times about this much at most (fewer runs when one Step() is long).
constexpr int64_t kFcCalibrationBudgetNs = 200 * kNsPerMs;
constexpr uint32_t kFcMaxPasses = 1U << 24;
/// Passes timed to estimate the cost of one pass (the search's first guess).
constexpr uint32_t kFcProbePasses = 16;

/// Times Step() on one controller, continuing at job `k`, and remembers how many jobs it ran.
class FcStepTimer {
 public:
  explicit FcStepTimer(FlightController& c) : c_(c) { times_.reserve(kFcCalibrationRuns); }

  /// Median CLOCK_MONOTONIC time of Step() with `passes`: up to 201 runs after a warm-up,
  /// fewer when one job is long (about 0.2 s of timing per measurement).
  int64_t MedianNs(uint32_t passes) {
    c_.SetExtraPasses(passes);
    int64_t first = TimeOne();
    int64_t runs = kFcCalibrationBudgetNs / std::max<int64_t>(first, 1);
    runs = std::clamp<int64_t>(runs, kFcCalibrationMinRuns, kFcCalibrationRuns) | 1;
    int64_t warmup = std::min<int64_t>(kFcCalibrationWarmup, runs / 4);
    for (int64_t i = 0; i < warmup; ++i) c_.Step(k_++);
    times_.clear();
    for (int64_t i = 0; i < runs; ++i) times_.push_back(TimeOne());
    auto mid = times_.begin() + static_cast<std::ptrdiff_t>(times_.size() / 2);
    std::nth_element(times_.begin(), mid, times_.end());
    last_runs_ = static_cast<int>(runs);
    return *mid;
  }
  uint64_t jobs() const { return k_; }
  int last_runs() const { return last_runs_; }

 private:
  int64_t TimeOne() {
    int64_t t0 = MonotonicNs();
    c_.Step(k_++);
    return MonotonicNs() - t0;
  }
  FlightController& c_;
  std::vector<int64_t> times_;
  uint64_t k_ = 0;
  int last_runs_ = 0;
};

/// The search: bracket the target between two pass counts (starting from a linear guess,
/// doubling or halving), then bisect; the answer is the measured count closest to the target.
uint32_t FcSearchPasses(FcStepTimer& timer, int64_t target_ns, int64_t base_ns) {
  auto error = [&](int64_t ns) { return std::abs(static_cast<double>(ns - target_ns)); };
  const double tolerance = 0.05 * static_cast<double>(target_ns);
  uint32_t best = 0;
  double best_error = error(base_ns);
  auto measure = [&](uint32_t passes) {
    int64_t ns = timer.MedianNs(passes);
    if (error(ns) < best_error) {
      best = passes;
      best_error = error(ns);
    }
    return ns;
  };
  if (best_error <= tolerance) return best;
  int64_t probe_ns = measure(kFcProbePasses);
  if (best_error <= tolerance) return best;
  double per_pass = std::max(1.0, static_cast<double>(probe_ns - base_ns) / kFcProbePasses);
  double guess = static_cast<double>(target_ns - base_ns) / per_pass;
  uint32_t lo = 0, hi = 0;  // time(lo) < target <= time(hi)
  uint32_t at = static_cast<uint32_t>(std::clamp(guess, 1.0, static_cast<double>(kFcMaxPasses)));
  if (measure(at) < target_ns) {
    lo = at;
    for (hi = std::min(kFcMaxPasses, 2 * at); best_error > tolerance; hi = 2 * hi) {
      if (measure(hi) >= target_ns || hi >= kFcMaxPasses) break;
      lo = hi;
    }
  } else {
    hi = at;
    for (lo = at / 2; best_error > tolerance && lo > 0; lo /= 2) {
      if (measure(lo) < target_ns) break;
      hi = lo;
    }
  }
  while (best_error > tolerance && hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (measure(mid) < target_ns) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return best;
}

}  // namespace

Expected<Calibration> CalibrateExec(FlightController& controller, int64_t target_ns) {
  if (target_ns <= 0) {
    return UsageError(fmt::format(
        "--exec {} ns is not a positive time; give the job's target execution time, e.g. "
        "--exec 200us",
        target_ns));
  }
  // Calibrate on the controller itself (its work set is the memory the job really touches)
  // and put its state back afterwards: the filter, the PIDs and the checksum as they were,
  // and every work-set line's visit count less the calibration's jobs.
  const FlightController::State saved = controller.state_;
  const uint32_t saved_passes = controller.extra_passes();
  FcStepTimer timer(controller);
  Calibration result;
  result.base_ns = timer.MedianNs(0);
  Status status = Status::Ok();
  if (target_ns < result.base_ns) {
    status = UsageError(fmt::format(
        "--exec {:g} us is below the job's own execution time here ({:g} us with no extra "
        "passes, median of {} runs); give at least {:g} us, or leave --exec out",
        static_cast<double>(target_ns) / kNsPerUs, static_cast<double>(result.base_ns) / kNsPerUs,
        timer.last_runs(), static_cast<double>(result.base_ns) / kNsPerUs));
  } else {
    result.passes = FcSearchPasses(timer, target_ns, result.base_ns);
    result.measured_ns = timer.MedianNs(result.passes);
  }
  controller.state_ = saved;
  controller.SetExtraPasses(status.ok() ? result.passes : saved_passes);
  for (size_t i = 0; i < controller.work_lines_; ++i) {
    controller.work_set_.get()[i].visits -= timer.jobs();
  }
  if (!status.ok()) return status.error();
  return result;
}

}  // namespace rtpulse::control
