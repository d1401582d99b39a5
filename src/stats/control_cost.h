#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

// Control cost under measured timing (docs/control.md, "Control cost"): the measured
// sampling instants and actuation delays of every job are replayed against a linearised
// quadrotor attitude model in simulated time, in the spirit of JitterTime, and the quadratic
// cost and peak attitude error are compared with the same controller under ideal timing
// (sampled at its release, output applied at once, no release skipped).
namespace rtpulse::stats {

/// One job as the replay sees it, relative to its release r_k (ns).
struct ReplayJob {
  int64_t sample_offset_ns = 0;     ///< s_k - r_k: when the controller read the plant.
  int64_t actuation_offset_ns = 0;  ///< c_k - r_k: when its output reached the motors.
  /// False for a release no job served: the previous output is held.
  bool executed = true;
};

/// The fixed model, controller, weights, disturbance and horizon. Defaults are the documented
/// ones (docs/control.md, "Control cost"); the result prints them.
struct ReplaySettings {
  int64_t period_ns = 4'000'000;
  double inertia_kg_m2 = 0.0023;     ///< Roll-axis moment of inertia of a ~1 kg quadrotor.
  double torque_per_unit_nm = 0.25;  ///< Torque of a normalised command of 1.
  double motor_time_constant_s = 0.02;
  /// State-feedback gains on angle (1/rad) and rate (s/rad); 0: the documented defaults
  /// (kDefaultKp, kDefaultKd).
  double kp = 0;
  double kd = 0;
  double q_angle = 1.0;  ///< Cost weights: angle^2 (rad^2), rate^2, command^2, per second.
  double q_rate = 0.01;
  double r_command = 0.01;
  /// Angle at r_0. A nonzero value is the peak error of every replay (the peak counts from r_0).
  double initial_angle_rad = 0;
  double disturbance_nm = 0.02;       ///< Step gust torque ...
  double disturbance_at_s = 0.2;      ///< ... from this time on ...
  double disturbance_on_s = 0.25;     ///< ... lasting this long (0: for ever, a single step) ...
  double disturbance_repeat_s = 0.5;  ///< ... repeated with this period (0: once).
  double horizon_s = 0;               ///< 0: the releases' span, jobs x period.
  /// The peak error is evaluated at every event and at least this often (ns).
  int64_t peak_step_ns = 500'000;
};

/// The default gains: the continuous closed loop's poles at -20 and -15 +- 15j rad/s
/// (docs/control.md); stable with margin at 4 ms under ideal timing and up to a full period of
/// delay.
inline constexpr double kDefaultKp = 1.656;
inline constexpr double kDefaultKd = 0.1932;

/// What the replay found.
struct ReplayResult {
  double cost = 0;               ///< Integral of x'Qx + u'Ru under the measured timing.
  double ideal_cost = 0;         ///< The same under ideal timing.
  double cost_increase_pct = 0;  ///< NaN when the ideal cost is 0 (no relative number).
  double peak_error_rad = 0;     ///< Max |angle| under the measured timing.
  double ideal_peak_error_rad = 0;
  int64_t worst_stall_ns = 0;  ///< Longest time between two actuations.
  uint64_t jobs = 0;           ///< Executed releases.
  uint64_t skipped = 0;        ///< Releases no job served (the output was held).
  /// Executed jobs whose actuation fell after the horizon (not replayed, counted).
  uint64_t beyond_horizon = 0;
  double horizon_s = 0;
  /// The measured timing drove the attitude error beyond the linearised model's range
  /// (kReplayModelRangeRad) or without bound (the closed loop went unstable): the cost and
  /// peak numbers then mean "control lost", not a quantity, and are not printed as one.
  bool outside_model = false;
};

/// The largest |angle| for which the small-angle linearisation is read as meaningful
/// (0.5 rad, about 29 degrees).
inline constexpr double kReplayModelRangeRad = 0.5;

/// Replays `jobs` (in release order, one per grid point), then the same count under ideal
/// timing. Usage error (naming the job or the setting): no job, an executed job's offset that
/// is negative or an actuation before its sampling, a settings value out of range, a horizon
/// needing more than 2e7 peak-evaluation points.
Expected<ReplayResult> ReplayControlCost(const std::vector<ReplayJob>& jobs,
                                         const ReplaySettings& settings);

/// The model, gains, weights, disturbance and horizon as lines for the output.
std::string DescribeReplaySettings(const ReplaySettings& settings);

/// The cost increase as printed: one decimal ("+4.2"), two significant digits below 0.1 %
/// ("+0.0042") so a small effect does not read as none.
std::string FormatCostIncreasePct(double pct);

/// One sentence: "+4.2 % cost vs ideal timing; worst stall 9.0 ms, peak error 0.8 deg (ideal
/// 0.6 deg)".
std::string DescribeReplayResult(const ReplayResult& result);

}  // namespace rtpulse::stats
