#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/fs_root.h"

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

/// Roll, pitch, yaw in radians (Z-Y-X Euler angles; body frame x forward, y right, z down:
/// +roll puts the right side down, +pitch the nose up, +yaw turns the nose right).
struct Attitude {
  double roll = 0;
  double pitch = 0;
  double yaw = 0;
};

/// A setpoint for the cascade: attitude for the angle loop, body rates (rad/s) fed forward
/// to the rate loop.
struct AttitudeCommand {
  Attitude attitude;
  double rate[3] = {0, 0, 0};
};

/// Deterministic synthetic IMU: a scripted manoeuvre (documented in docs/control.md) plus
/// seeded noise. Sample k is a pure function of (seed, k, dt), so two runs of the same job
/// compute exactly the same numbers whatever their timing. The gyro reads the true body rates
/// plus a fixed bias and noise; the accelerometer reads the specific force of a vehicle
/// hovering in place (gravity rotated into the body frame: (0, 0, -g) when level) plus noise.
/// The noise comes from a counter-based generator (splitmix64 of seed and k), so no state.
class SyntheticImu {
 public:
  static constexpr double kGravity = 9.80665;                     ///< m/s^2
  static constexpr double kGyroBias[3] = {0.004, -0.003, 0.002};  ///< rad/s
  static constexpr double kGyroNoiseStd = 0.01;                   ///< rad/s, uniform
  static constexpr double kAccelNoiseStd = 0.05;                  ///< m/s^2, uniform

  SyntheticImu(uint64_t seed, double dt_s);
  ImuSample Sample(uint64_t k) const;
  /// The noiseless, unbiased sample (the true body rates and specific force).
  ImuSample TrueSample(uint64_t k) const;
  /// The job's setpoint at sample k: the manoeuvre's attitude and body rates, as a pilot or a
  /// trajectory generator commands them (the rates are the rate loop's feedforward). The IMU
  /// shows a vehicle flying that command, so the controller regulates what is left: the
  /// estimator's error, the gyro bias and the noise.
  AttitudeCommand Command(uint64_t k) const;
  /// The attitude the manoeuvre really has at sample k (ground truth for the estimator).
  Attitude TrueAttitude(uint64_t k) const;

 private:
  uint64_t seed_;
  double dt_s_;
};

/// Mahony complementary filter on the rotation (quaternion form): the gyro is integrated and
/// corrected by kp (proportional) and ki (integral, which learns the gyro bias) times the
/// angle between the measured gravity direction (from the accelerometer) and the estimated
/// one. Yaw is not observable from gravity, so it is the integrated gyro alone.
class MahonyFilter {
 public:
  explicit MahonyFilter(double kp = 2.0, double ki = 0.005);
  void Update(const ImuSample& imu, double dt_s);
  Attitude attitude() const;
  /// Body-to-world quaternion (w, x, y, z).
  const double* quaternion() const { return q_; }
  void Reset();

 private:
  double kp_, ki_;
  double q_[4] = {1, 0, 0, 0};
  double integral_[3] = {0, 0, 0};
};

/// One PID stage: output = kp*e + I + kd*de/dt, clamped to +-out_limit; I accumulates
/// ki*e*dt and is clamped to +-i_limit (in output units, the anti-windup). A limit of 0 means
/// no limit.
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
  /// One step on `error` over `dt_s`; the derivative acts on the error (0 on the first step
  /// after construction or Reset(), which has no previous error).
  double Step(double error, double dt_s);
  double integral() const { return integral_; }
  void Reset();
  const PidGains& gains() const { return gains_; }

 private:
  PidGains gains_;
  double integral_ = 0;
  double previous_error_ = 0;
  bool first_ = true;
};

/// The four motor commands in [0, 1] (quad-X: front-right, rear-left, front-left, rear-right
/// as docs/control.md draws them) and whether the mixer had to saturate. Motors 0 and 1 spin
/// counter-clockwise seen from above, 2 and 3 clockwise (the PX4 / ArduPilot quad-X order).
struct MotorOutputs {
  double motor[4] = {0, 0, 0, 0};
  bool saturated = false;
};

/// Quad-X mixing of a collective `throttle` in [0, 1] and roll/pitch/yaw torques in [-1, 1]:
///   motor[0] front-right = throttle - roll + pitch + yaw
///   motor[1] rear-left   = throttle + roll - pitch + yaw
///   motor[2] front-left  = throttle + roll + pitch - yaw
///   motor[3] rear-right  = throttle - roll - pitch - yaw
/// (+roll lifts the left side, +pitch the front, +yaw speeds up the counter-clockwise
/// motors). When a motor would leave [0, 1], the attitude part (roll, pitch, yaw together) is
/// scaled down by the largest factor that keeps all four in range, the collective is kept,
/// and `saturated` is set. A throttle outside [0, 1] is clamped and also sets `saturated`.
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

/// What --exec found: the passes that make one Step() take about `target_ns` here, the
/// median time measured with them, and the median of a single pass.
struct Calibration {
  uint32_t passes = 0;
  int64_t measured_ns = 0;
  int64_t base_ns = 0;
};

/// Checks that a work set of `bytes` fits in the memory the kernel says is available
/// (MemAvailable in /proc/meminfo under `root`): a usage error naming both numbers if not.
/// Ok when /proc/meminfo cannot be read (then only the allocation can tell). `as_given` is
/// the option's text ("2G"), quoted in the message beside the bytes when not empty.
Status CheckWorkSetFits(size_t bytes, const FsRoot& root, std::string_view as_given = "");

/// Unmaps a work set's mapping of `bytes` (FlightController's).
struct WorkSetUnmap {
  size_t bytes = 0;
  void operator()(void* mapping) const;
};

/// The whole job: IMU -> estimator -> cascaded PID -> mixer, plus the optional work set and
/// calibration passes.
class FlightController {
 public:
  FlightController(const ControllerConfig& config, uint64_t seed);

  /// Allocates and touches `bytes` of memory the job reads and writes every period (0: none;
  /// else a multiple of 64, one cache line per cell). Every Step() read-modify-writes one
  /// word of every line: streaming walks the lines in order; random follows a fixed
  /// pseudo-random cyclic permutation of all lines (a dependent pointer chase, so the hardware
  /// prefetcher cannot hide it). Usage error for a bad size, resource error when it cannot be
  /// allocated.
  Status SetWorkSet(size_t bytes, WorkSetMode mode);
  size_t work_set_bytes() const { return work_lines_ * sizeof(WorkLine); }
  WorkSetMode work_set_mode() const { return mode_; }
  /// Extra passes of the estimator and PID arithmetic per job (0: one pass), for --exec. They
  /// run on scratch state of their own, so they change the cost, not the outputs.
  void SetExtraPasses(uint32_t passes) { state_.extra_passes = passes; }
  uint32_t extra_passes() const { return state_.extra_passes; }

  /// Job k. No allocation, no system call.
  MotorOutputs Step(uint64_t k);

  const Attitude& estimate() const { return state_.estimate; }
  const ControllerConfig& config() const { return state_.config; }
  /// A value that depends on every computation so far (keeps the compiler from dropping work;
  /// equal across runs with the same seed and settings).
  uint64_t checksum() const { return state_.checksum; }

  /// Test hooks: how many times Step() has touched work-set line `line`, and the line the
  /// random chain goes to after it.
  uint64_t line_visits(size_t line) const { return work_set_.get()[line].visits; }
  uint64_t line_next(size_t line) const { return work_set_.get()[line].next; }
  /// Test hook: where the work set is mapped (nullptr: none).
  const void* work_set_address() const { return work_set_.get(); }

 private:
  friend Expected<Calibration> CalibrateExec(FlightController& controller, int64_t target_ns);

  struct alignas(64) WorkLine {
    uint64_t next = 0;    ///< Random mode: the next line of the chain.
    uint64_t visits = 0;  ///< Incremented by every Step(): the word the job writes.
    uint64_t pad[6] = {};
  };
  /// Everything but the work set, so calibration can save and restore it.
  struct State {
    State(const ControllerConfig& c, uint64_t seed);
    ControllerConfig config;
    SyntheticImu imu;
    MahonyFilter filter;
    Pid angle[3];
    Pid rate[3];
    Attitude estimate;
    MahonyFilter scratch_filter;  ///< The extra passes' own state.
    Pid scratch_angle[3];
    Pid scratch_rate[3];
    uint32_t extra_passes = 0;
    uint64_t checksum = 0;
  };
  uint64_t TouchWorkSet();
  double ExtraPass(const ImuSample& imu, const AttitudeCommand& command);

  State state_;
  uint64_t seed_;
  /// Its own anonymous mapping, marked MADV_DONTFORK: the loads a run starts are forked from
  /// this process, and a fork would make every work-set page copy-on-write, so the next job
  /// after each load start would take one page fault per page (seen in the interference
  /// runs' page-fault counter) that an isolated run never takes.
  std::unique_ptr<WorkLine, WorkSetUnmap> work_set_;
  size_t work_lines_ = 0;
  WorkSetMode mode_ = WorkSetMode::kStreaming;
};

/// Calibrates `controller` in the calling thread and sets its passes: medians of timed Step()
/// runs with no extra passes, then a linear first guess, bracketing and bisection until the
/// median is within 5 % of the target; the closest count wins and is timed once more
/// (measured_ns). Call it in the job's thread after its RT set-up (before the first job),
/// so it times the job under its policy and on its CPU: in a SCHED_OTHER thread on a busy
/// machine the medians include other processes' time. The controller's numerics are left as
/// they were (its state is saved and restored), so a calibrated job computes what an
/// uncalibrated one with the same passes does. The result holds on this CPU at its current
/// frequency only: docs/control.md says so, and the run records it. A target below one
/// pass's time is a usage error naming both (the passes are then left as they were).
Expected<Calibration> CalibrateExec(FlightController& controller, int64_t target_ns);

}  // namespace rtpulse::control
