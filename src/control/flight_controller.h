#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/error.h"

// The control job of `rtpulse control` (docs/control.md): a real quadrotor attitude
// controller, not a spin loop. Each job reads one deterministic synthetic IMU sample, updates
// an attitude estimate (Mahony filter), runs a cascaded PID (angle -> rate) and mixes the
// result onto four motors in the quad-X layout, with saturation. Everything is allocated in
// the constructor and SetWorkSet(); Step() allocates nothing and makes no system call, so it
// may run in the real-time loop.
namespace rtpulse::control {

/// One IMU reading in the body frame: angular rate (rad/s) and specific force (m/s^2).
struct ImuSample {
  double gyro[3] = {0, 0, 0};
  double accel[3] = {0, 0, 0};
};

/// Roll, pitch, yaw in radians.
struct Attitude {
  double roll = 0;
  double pitch = 0;
  double yaw = 0;
};

/// Deterministic synthetic IMU: a scripted manoeuvre (documented in docs/control.md) plus
/// seeded noise. Sample k is a pure function of (seed, k, dt), so two runs of the same job
/// compute exactly the same numbers whatever their timing.
class SyntheticImu {
 public:
  SyntheticImu(uint64_t seed, double dt_s);
  ImuSample Sample(uint64_t k) const;
  /// The attitude the manoeuvre really has at sample k (ground truth for the estimator).
  Attitude TrueAttitude(uint64_t k) const;

 private:
  uint64_t seed_;
  double dt_s_;
};

/// Mahony complementary filter on the rotation (quaternion form).
class MahonyFilter {
 public:
  MahonyFilter(double kp = 2.0, double ki = 0.005);
  void Update(const ImuSample& imu, double dt_s);
  Attitude attitude() const;
  void Reset();

 private:
  double kp_, ki_;
  double q_[4] = {1, 0, 0, 0};
  double integral_[3] = {0, 0, 0};
};

/// One PID stage: output clamped to +-out_limit, integral clamped to +-i_limit (anti-windup).
struct PidGains {
  double kp = 0;
  double ki = 0;
  double kd = 0;
  double i_limit = 0;
  double out_limit = 0;
};

class Pid {
 public:
  explicit Pid(const PidGains& gains = {});
  /// One step on `error` over `dt_s`; the derivative acts on the error.
  double Step(double error, double dt_s);
  void Reset();
  const PidGains& gains() const { return gains_; }

 private:
  PidGains gains_;
  double integral_ = 0;
  double previous_error_ = 0;
  bool first_ = true;
};

/// The four motor commands in [0, 1] (quad-X: front-right, rear-left, front-left, rear-right
/// as docs/control.md draws them) and whether the mixer had to saturate.
struct MotorOutputs {
  double motor[4] = {0, 0, 0, 0};
  bool saturated = false;
};

/// Quad-X mixing of a collective `throttle` in [0, 1] and roll/pitch/yaw torques in [-1, 1].
/// When a motor would leave [0, 1], the attitude part is scaled down (thrust is what gives
/// way, as flight stacks do) and `saturated` is set.
MotorOutputs MixQuadX(double throttle, double roll, double pitch, double yaw);

/// The controller's tuning: angle loop (outer, rad -> rad/s) and rate loop (inner,
/// rad/s -> normalised torque), per axis roll, pitch, yaw.
struct ControllerConfig {
  double dt_s = 0.004;  ///< The control period (250 Hz).
  PidGains angle[3];
  PidGains rate[3];
  double hover_throttle = 0.5;
  /// Defaults documented in docs/control.md.
  static ControllerConfig Defaults(double dt_s = 0.004);
};

/// How the job walks its work set each period.
enum class WorkSetMode { kStreaming, kRandom };

/// The whole job: IMU -> estimator -> cascaded PID -> mixer, plus the optional work set and
/// calibration passes.
class FlightController {
 public:
  FlightController(const ControllerConfig& config, uint64_t seed);

  /// Allocates and touches `bytes` of memory the job reads and writes every period (0: none).
  /// Streaming walks it in order, one cache line per step; random visits every line in a fixed
  /// pseudo-random order (a dependent chain, so the hardware prefetcher cannot hide it).
  Status SetWorkSet(size_t bytes, WorkSetMode mode);
  /// Extra passes of the estimator and PID arithmetic per job (0: one pass), for --exec.
  void SetExtraPasses(uint32_t passes) { extra_passes_ = passes; }
  uint32_t extra_passes() const { return extra_passes_; }

  /// Job k. No allocation, no system call.
  MotorOutputs Step(uint64_t k);

  const Attitude& estimate() const { return estimate_; }
  /// A value that depends on every computation so far (keeps the compiler from dropping work;
  /// equal across runs with the same seed and settings).
  uint64_t checksum() const { return checksum_; }

 private:
  ControllerConfig config_;
  SyntheticImu imu_;
  MahonyFilter filter_;
  Pid angle_[3];
  Pid rate_[3];
  Attitude estimate_;
  std::vector<uint64_t> work_set_;  ///< Cache-line-sized cells; random mode stores the chain.
  WorkSetMode mode_ = WorkSetMode::kStreaming;
  uint32_t extra_passes_ = 0;
  uint64_t checksum_ = 0;
};

/// What --exec found: the passes that make one Step() take about `target_ns` here, the
/// median time measured with them, and the median of a single pass.
struct Calibration {
  uint32_t passes = 0;
  int64_t measured_ns = 0;
  int64_t base_ns = 0;
};

/// Calibrates `controller` in the calling thread (medians of timed Step() runs) and sets its
/// passes. The result holds on this CPU at its current frequency only: docs/control.md says
/// so, and the run records it. A target below one pass's time is a usage error naming both.
Expected<Calibration> CalibrateExec(FlightController& controller, int64_t target_ns);

}  // namespace rtpulse::control
