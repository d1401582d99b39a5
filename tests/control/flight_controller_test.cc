// The control job's numerics against independent computations written here: rotation
// matrices and quaternion kinematics for the synthetic IMU, an explicit-Euler rigid body and
// a hand-written PID cascade for the step response, mixer and PID values worked out by hand.
#include "control/flight_controller.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <vector>

#include "core/clock.h"

namespace rtpulse::control {
namespace {

constexpr double kDeg = std::numbers::pi / 180;
constexpr double kDt = 0.004;

// --- Synthetic IMU --------------------------------------------------------------------------

using Mat3 = std::array<std::array<double, 3>, 3>;

Mat3 MatMul(const Mat3& a, const Mat3& b) {
  Mat3 c{};
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 3; ++j)
      for (size_t m = 0; m < 3; ++m) c[i][j] += a[i][m] * b[m][j];
  return c;
}

/// Body-to-world rotation Rz(yaw) * Ry(pitch) * Rx(roll), built from the three elementary
/// rotations.
Mat3 BodyToWorld(const Attitude& a) {
  double cr = std::cos(a.roll), sr = std::sin(a.roll);
  double cp = std::cos(a.pitch), sp = std::sin(a.pitch);
  double cy = std::cos(a.yaw), sy = std::sin(a.yaw);
  Mat3 rx = {{{1, 0, 0}, {0, cr, -sr}, {0, sr, cr}}};
  Mat3 ry = {{{cp, 0, sp}, {0, 1, 0}, {-sp, 0, cp}}};
  Mat3 rz = {{{cy, -sy, 0}, {sy, cy, 0}, {0, 0, 1}}};
  return MatMul(rz, MatMul(ry, rx));
}

TEST(SyntheticImuTest, AccelIsGravityRotatedIntoTheBodyFrame) {
  SyntheticImu imu(1, kDt);
  for (uint64_t k : {0ULL, 1ULL, 777ULL, 2500ULL, 100000ULL}) {
    Mat3 r = BodyToWorld(imu.TrueAttitude(k));
    ImuSample s = imu.TrueSample(k);
    // NED world, hovering: specific force = R^T * (0, 0, -g).
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_NEAR(s.accel[i], -SyntheticImu::kGravity * r[2][i], 1e-12) << "k " << k;
    }
  }
}

TEST(SyntheticImuTest, IntegratingTheTrueGyroReproducesTheTrueAttitude) {
  // Quaternion kinematics written here (RK4 on q' = q * (0, w) / 2), at a tenth of the step,
  // over 10 s of the manoeuvre: the gyro is the derivative of the attitude it claims.
  const double fine = kDt / 10;
  SyntheticImu imu(1, fine / 2);  // half steps for RK4's midpoints
  Attitude a0 = imu.TrueAttitude(0);
  double cr = std::cos(a0.roll / 2), sr = std::sin(a0.roll / 2);
  double cp = std::cos(a0.pitch / 2), sp = std::sin(a0.pitch / 2);
  double cy = std::cos(a0.yaw / 2), sy = std::sin(a0.yaw / 2);
  std::array<double, 4> q = {cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
                             cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy};
  auto deriv = [](const std::array<double, 4>& v, const double* w) {
    return std::array<double, 4>{0.5 * (-v[1] * w[0] - v[2] * w[1] - v[3] * w[2]),
                                 0.5 * (v[0] * w[0] + v[2] * w[2] - v[3] * w[1]),
                                 0.5 * (v[0] * w[1] - v[1] * w[2] + v[3] * w[0]),
                                 0.5 * (v[0] * w[2] + v[1] * w[1] - v[2] * w[0])};
  };
  auto axpy = [](const std::array<double, 4>& v, double h, const std::array<double, 4>& d) {
    return std::array<double, 4>{v[0] + h * d[0], v[1] + h * d[1], v[2] + h * d[2],
                                 v[3] + h * d[3]};
  };
  const uint64_t steps = 25000;  // 10 s
  double worst = 0;
  for (uint64_t n = 0; n < steps; ++n) {
    ImuSample s0 = imu.TrueSample(2 * n), s1 = imu.TrueSample(2 * n + 1),
              s2 = imu.TrueSample(2 * n + 2);
    auto k1 = deriv(q, s0.gyro);
    auto k2 = deriv(axpy(q, fine / 2, k1), s1.gyro);
    auto k3 = deriv(axpy(q, fine / 2, k2), s1.gyro);
    auto k4 = deriv(axpy(q, fine, k3), s2.gyro);
    for (size_t i = 0; i < 4; ++i) q[i] += fine / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    if ((n + 1) % 250 == 0) {
      Attitude t = imu.TrueAttitude(2 * (n + 1));
      double roll =
          std::atan2(2 * (q[0] * q[1] + q[2] * q[3]), 1 - 2 * (q[1] * q[1] + q[2] * q[2]));
      double pitch = std::asin(2 * (q[0] * q[2] - q[3] * q[1]));
      double yaw = std::atan2(2 * (q[0] * q[3] + q[1] * q[2]), 1 - 2 * (q[2] * q[2] + q[3] * q[3]));
      worst = std::max(
          {worst, std::abs(roll - t.roll), std::abs(pitch - t.pitch), std::abs(yaw - t.yaw)});
    }
  }
  EXPECT_LT(worst, 1e-6) << "rad";
}

TEST(SyntheticImuTest, SamplesArePureFunctionsWithTheDocumentedNoise) {
  SyntheticImu a(42, kDt), b(42, kDt), other(43, kDt);
  ImuSample late = a.Sample(123456);
  for (uint64_t k = 0; k < 100; ++k) (void)b.Sample(k);
  ImuSample again = b.Sample(123456);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(late.gyro[i], again.gyro[i]);
    EXPECT_EQ(late.accel[i], again.accel[i]);
  }
  EXPECT_NE(late.gyro[0], other.Sample(123456).gyro[0]);
  // Noise = sample - truth - bias: mean ~0, standard deviation as documented.
  const int n = 200000;
  double sum = 0, sum2 = 0, asum2 = 0;
  for (int k = 0; k < n; ++k) {
    ImuSample s = a.Sample(static_cast<uint64_t>(k));
    ImuSample t = a.TrueSample(static_cast<uint64_t>(k));
    double e = s.gyro[1] - t.gyro[1] - SyntheticImu::kGyroBias[1];
    sum += e;
    sum2 += e * e;
    double ae = s.accel[2] - t.accel[2];
    asum2 += ae * ae;
  }
  double mean = sum / n;
  EXPECT_LT(std::abs(mean), 5 * SyntheticImu::kGyroNoiseStd / std::sqrt(n));
  EXPECT_NEAR(std::sqrt(sum2 / n - mean * mean), SyntheticImu::kGyroNoiseStd,
              0.01 * SyntheticImu::kGyroNoiseStd);
  EXPECT_NEAR(std::sqrt(asum2 / n), SyntheticImu::kAccelNoiseStd,
              0.01 * SyntheticImu::kAccelNoiseStd);
}

// --- Estimator ------------------------------------------------------------------------------

/// True when a fork of this process does not inherit `address` (msync on a range with no
/// mapping fails with ENOMEM in the child).
bool ForkedChildLacksMapping(void* address, size_t bytes) {
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) _exit(msync(address, bytes, MS_ASYNC) != 0 && errno == ENOMEM ? 0 : 1);
  int status = 0;
  if (waitpid(child, &status, 0) != child) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(WorkSetTest, IsNotInheritedByAFork) {
  // The loads a run starts are forked from this process: were the work set inherited, every
  // page would turn copy-on-write and the next job would take a page fault per page.
  constexpr size_t kBytes = 256 * 1024;
  // First the kernel facility itself, on a mapping of the test's own: an emulator such as
  // qemu-user (the arm64 CI stage) accepts MADV_DONTFORK and ignores it.
  void* own = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(own, MAP_FAILED);
  ASSERT_EQ(madvise(own, kBytes, MADV_DONTFORK), 0);
  const bool honoured = ForkedChildLacksMapping(own, kBytes);
  munmap(own, kBytes);
  if (!honoured) GTEST_SKIP() << "MADV_DONTFORK is not honoured here (an emulator?)";

  FlightController c(ControllerConfig::Defaults(0.004), 3);
  ASSERT_TRUE(c.SetWorkSet(kBytes, WorkSetMode::kStreaming).ok());
  void* address = const_cast<void*>(c.work_set_address());
  ASSERT_NE(address, nullptr);
  ASSERT_EQ(msync(address, kBytes, MS_ASYNC), 0) << "mapped in the parent";
  EXPECT_TRUE(ForkedChildLacksMapping(address, kBytes))
      << "the child still had the work set mapped";
}

TEST(MahonyFilterTest, TracksTheTrueAttitudeAfterConvergence) {
  // Starts level while the manoeuvre starts 4 deg nose-up; kp = 2 converges in ~0.5 s.
  // Roll and pitch within 1 deg over steps 500..5000 (2..20 s); yaw has no gravity
  // reference, so it drifts with the uncorrected gyro bias (0.002 rad/s: < 2.3 deg in 20 s).
  SyntheticImu imu(7, kDt);
  MahonyFilter filter;
  double worst_tilt = 0, worst_yaw = 0, initial = 0;
  for (uint64_t k = 0; k <= 5000; ++k) {
    filter.Update(imu.Sample(k), kDt);
    Attitude e = filter.attitude(), t = imu.TrueAttitude(k);
    if (k == 0) initial = std::abs(e.pitch - t.pitch);
    if (k < 500) continue;
    worst_tilt = std::max({worst_tilt, std::abs(e.roll - t.roll), std::abs(e.pitch - t.pitch)});
    worst_yaw = std::max(worst_yaw, std::abs(std::remainder(e.yaw - t.yaw, 2 * std::numbers::pi)));
  }
  EXPECT_GT(initial, 3 * kDeg);  // it really had to converge
  EXPECT_LT(worst_tilt, 1 * kDeg);
  EXPECT_LT(worst_yaw, 3 * kDeg);
}

TEST(MahonyFilterTest, WithoutAccelerometerFeedbackTheTiltErrorStays) {
  // Guards the test above: kp = ki = 0 (gyro only) never corrects the initial 4 deg.
  SyntheticImu imu(7, kDt);
  MahonyFilter filter(0, 0);
  double error = 0;
  for (uint64_t k = 0; k <= 1000; ++k) {
    filter.Update(imu.Sample(k), kDt);
    if (k == 1000) error = std::abs(filter.attitude().pitch - imu.TrueAttitude(k).pitch);
  }
  EXPECT_GT(error, 1 * kDeg);
}

// --- PID ------------------------------------------------------------------------------------

TEST(PidTest, ProportionalOnlyWithOutputClamp) {
  Pid p({.kp = 2, .ki = 0, .kd = 0, .i_limit = 0, .out_limit = 0.8});
  EXPECT_DOUBLE_EQ(p.Step(0.25, 0.01), 0.5);
  EXPECT_DOUBLE_EQ(p.Step(0.5, 0.01), 0.8);  // 1.0 clamped
  EXPECT_DOUBLE_EQ(p.Step(-1, 0.01), -0.8);
  Pid unlimited({.kp = 2, .ki = 0, .kd = 0, .i_limit = 0, .out_limit = 0});
  EXPECT_DOUBLE_EQ(unlimited.Step(5, 0.01), 10);
}

TEST(PidTest, IntegralIsClampedAndUnwindsAtOnce) {
  Pid p({.kp = 0, .ki = 10, .kd = 0, .i_limit = 0.3, .out_limit = 0});
  EXPECT_DOUBLE_EQ(p.Step(1, 0.01), 0.1);
  EXPECT_DOUBLE_EQ(p.Step(1, 0.01), 0.2);
  EXPECT_DOUBLE_EQ(p.Step(1, 0.01), 0.3);
  EXPECT_DOUBLE_EQ(p.Step(1, 0.01), 0.3);  // clamped
  EXPECT_DOUBLE_EQ(p.Step(1, 0.01), 0.3);
  EXPECT_DOUBLE_EQ(p.integral(), 0.3);
  // Anti-windup: the clamp kept no hidden excess, so a negative error unwinds immediately.
  EXPECT_DOUBLE_EQ(p.Step(-1, 0.01), 0.2);
  p.Reset();
  EXPECT_DOUBLE_EQ(p.integral(), 0);
}

TEST(PidTest, DerivativeActsOnTheErrorWithoutAFirstStepKick) {
  // Values exact in binary, so the expectations are exact.
  Pid p({.kp = 1, .ki = 0, .kd = 0.5, .i_limit = 0, .out_limit = 0});
  EXPECT_EQ(p.Step(1.0, 0.125), 1.0);          // no previous error: D = 0
  EXPECT_EQ(p.Step(1.25, 0.125), 1.25 + 1.0);  // 0.5 * 0.25 / 0.125
  EXPECT_EQ(p.Step(1.75, 0.125), 1.75 + 2.0);  // 0.5 * 0.5 / 0.125
  EXPECT_EQ(p.Step(1.75, 0.125), 1.75);
  EXPECT_EQ(p.Step(1.25, 0.125), 1.25 - 2.0);
  p.Reset();
  EXPECT_EQ(p.Step(-2.0, 0.125), -2.0);
}

// --- Step response --------------------------------------------------------------------------

/// The roll axis as a rigid body: J * theta'' = torque_per_unit * u, here as b = 200 rad/s^2
/// per unit of normalised torque, explicit Euler at the control period.
struct RollBody {
  double theta = 0, omega = 0;
  void Advance(double u, double dt) {
    double theta_next = theta + dt * omega;
    omega += dt * 200.0 * u;
    theta = theta_next;
  }
};

/// The default cascade written out by hand (angle: P 6 clamped to 3.5 rad/s; rate: P 0.15,
/// I 0.2 clamped to 0.1, D 0.002 on the error, output clamped to 0.5).
std::vector<double> ReferenceStepResponse(double setpoint, int steps) {
  std::vector<double> theta;
  RollBody body;
  double integral = 0, previous = 0;
  for (int n = 0; n < steps; ++n) {
    double rate_sp = std::clamp(6.0 * (setpoint - body.theta), -3.5, 3.5);
    double e = rate_sp - body.omega;
    integral = std::clamp(integral + 0.2 * e * kDt, -0.1, 0.1);
    double d = n == 0 ? 0 : 0.002 * (e - previous) / kDt;
    previous = e;
    double u = std::clamp(0.15 * e + integral + d, -0.5, 0.5);
    body.Advance(u, kDt);
    theta.push_back(body.theta);
  }
  return theta;
}

TEST(StepResponseTest, DefaultCascadeSettlesOnARigidBodyAndMatchesTheHandWrittenOne) {
  const double setpoint = 10 * kDeg;
  const int steps = 1500;  // 6 s
  ControllerConfig config = ControllerConfig::Defaults(kDt);
  Pid angle(config.angle[0]), rate(config.rate[0]);
  RollBody body;
  std::vector<double> theta;
  for (int n = 0; n < steps; ++n) {
    double rate_sp = angle.Step(setpoint - body.theta, kDt);
    double u = rate.Step(rate_sp - body.omega, kDt);
    body.Advance(u, kDt);
    theta.push_back(body.theta);
  }
  std::vector<double> reference = ReferenceStepResponse(setpoint, steps);
  for (size_t n = 0; n < theta.size(); ++n) {
    ASSERT_NEAR(theta[n], reference[n], 1e-12) << "step " << n;
  }

  double peak = *std::max_element(theta.begin(), theta.end());
  int last_outside = -1;
  for (size_t n = 0; n < theta.size(); ++n) {
    if (std::abs(theta[n] - setpoint) > 0.02 * setpoint) last_outside = static_cast<int>(n);
  }
  double settling_s = (last_outside + 1) * kDt;
  EXPECT_LT(last_outside + 1, steps - 500) << "did not stay within 2 % for the last 2 s";
  EXPECT_LT(settling_s, 0.6);
  EXPECT_GT(settling_s, 0.2);  // a plant this slow cannot settle faster: the test is alive
  EXPECT_LT(peak, setpoint * 1.02) << "overshoot";
  EXPECT_NEAR(theta.back(), setpoint, 1e-4 * setpoint);
}

// --- Mixer ----------------------------------------------------------------------------------

void ExpectMotors(const MotorOutputs& m, std::array<double, 4> expected, bool saturated) {
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(m.motor[i], expected[i], 1e-12) << "motor " << i;
  EXPECT_EQ(m.saturated, saturated);
}

TEST(MixQuadXTest, HoverGivesTheCollectiveOnAllFour) {
  ExpectMotors(MixQuadX(0.5, 0, 0, 0), {0.5, 0.5, 0.5, 0.5}, false);
}

TEST(MixQuadXTest, SignsPerMotor) {
  // Order: front-right, rear-left, front-left, rear-right.
  ExpectMotors(MixQuadX(0.5, 0.1, 0, 0), {0.4, 0.6, 0.6, 0.4}, false);  // +roll lifts left
  ExpectMotors(MixQuadX(0.5, 0, 0.1, 0), {0.6, 0.4, 0.6, 0.4}, false);  // +pitch lifts front
  ExpectMotors(MixQuadX(0.5, 0, 0, 0.1), {0.6, 0.6, 0.4, 0.4}, false);  // +yaw: CCW motors up
  ExpectMotors(MixQuadX(0.5, 0.1, 0.2, 0.05), {0.65, 0.45, 0.75, 0.15}, false);
}

TEST(MixQuadXTest, SaturationScalesTheAttitudePart) {
  // 0.8 + 0.4 would be 1.2: scale 0.2 / 0.4 = 0.5.
  ExpectMotors(MixQuadX(0.8, 0.4, 0, 0), {0.6, 1.0, 1.0, 0.6}, true);
  // Parts (0.5, -0.1, 0.1, -0.5); 0.2 - 0.5 would be -0.3: scale 0.2 / 0.5 = 0.4.
  ExpectMotors(MixQuadX(0.2, 0, 0.3, 0.2), {0.4, 0.16, 0.24, 0.0}, true);
  // A throttle outside [0, 1] is clamped and reported.
  ExpectMotors(MixQuadX(1.5, 0, 0, 0), {1, 1, 1, 1}, true);
  MotorOutputs m = MixQuadX(0.9, -1, 1, -1);
  for (double v : m.motor) {
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 1);
  }
  EXPECT_TRUE(m.saturated);
}

// --- The whole job --------------------------------------------------------------------------

struct JobRun {
  uint64_t checksum;
  MotorOutputs last;
  Attitude estimate;
};

JobRun RunJob(uint64_t seed, uint32_t passes, size_t work_set, WorkSetMode mode, int steps) {
  FlightController c(ControllerConfig::Defaults(kDt), seed);
  EXPECT_TRUE(c.SetWorkSet(work_set, mode).ok());
  c.SetExtraPasses(passes);
  MotorOutputs last;
  for (int k = 0; k < steps; ++k) last = c.Step(static_cast<uint64_t>(k));
  return {c.checksum(), last, c.estimate()};
}

void ExpectSameOutputs(const JobRun& a, const JobRun& b) {
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.last.motor[i], b.last.motor[i]);
  EXPECT_EQ(a.estimate.roll, b.estimate.roll);
  EXPECT_EQ(a.estimate.pitch, b.estimate.pitch);
  EXPECT_EQ(a.estimate.yaw, b.estimate.yaw);
}

TEST(FlightControllerTest, SameSeedSameNumbersDifferentSeedDifferent) {
  JobRun a = RunJob(5, 0, 4096, WorkSetMode::kRandom, 1000);
  JobRun b = RunJob(5, 0, 4096, WorkSetMode::kRandom, 1000);
  JobRun c = RunJob(6, 0, 4096, WorkSetMode::kRandom, 1000);
  EXPECT_EQ(a.checksum, b.checksum);
  ExpectSameOutputs(a, b);
  EXPECT_NE(a.checksum, c.checksum);
  EXPECT_NE(a.estimate.roll, c.estimate.roll);
}

TEST(FlightControllerTest, ExtraPassesChangeTheCostNotTheOutputs) {
  JobRun plain = RunJob(5, 0, 0, WorkSetMode::kStreaming, 1000);
  JobRun heavy = RunJob(5, 7, 0, WorkSetMode::kStreaming, 1000);
  ExpectSameOutputs(plain, heavy);
  EXPECT_NE(plain.checksum, heavy.checksum);  // the passes are folded in, so they are run
}

TEST(FlightControllerTest, FlyingTheCommandedManoeuvreStaysOutOfSaturation) {
  // The IMU shows the vehicle flying its command, so after the estimator has converged the
  // cascade only corrects estimation error, gyro bias and noise. The vehicle does not answer
  // the torques, so the rate integrators ramp on the bias, but their clamps (0.1 per axis)
  // bound every torque: the mixer never saturates and the motors stay within 0.4 of hover.
  FlightController c(ControllerConfig::Defaults(kDt), 3);
  SyntheticImu truth(3, kDt);
  double worst_tilt = 0, worst_motor = 0;
  int saturated = 0;
  for (uint64_t k = 0; k < 10000; ++k) {
    MotorOutputs m = c.Step(k);
    if (k < 500) continue;
    saturated += m.saturated ? 1 : 0;
    for (double v : m.motor) worst_motor = std::max(worst_motor, std::abs(v - 0.5));
    Attitude t = truth.TrueAttitude(k);
    worst_tilt = std::max(
        {worst_tilt, std::abs(c.estimate().roll - t.roll), std::abs(c.estimate().pitch - t.pitch)});
  }
  EXPECT_LT(worst_tilt, 1 * kDeg);
  EXPECT_EQ(saturated, 0);
  EXPECT_LT(worst_motor, 0.4);
  EXPECT_GT(worst_motor, 0.01);  // it does correct

  // The command is the manoeuvre: attitude and body rates of the truth.
  AttitudeCommand cmd = truth.Command(1234);
  EXPECT_EQ(cmd.attitude.roll, truth.TrueAttitude(1234).roll);
  EXPECT_EQ(cmd.rate[1], truth.TrueSample(1234).gyro[1]);
}

TEST(FlightControllerTest, CommandingLevelDuringTheManoeuvreSaturates) {
  // Guards the test above: the same cascade and mixer, commanded level while the vehicle
  // flies the manoeuvre (errors up to ~15 deg that never shrink), saturates the mixer.
  SyntheticImu imu(3, kDt);
  ControllerConfig config = ControllerConfig::Defaults(kDt);
  Pid angle[3] = {Pid(config.angle[0]), Pid(config.angle[1]), Pid(config.angle[2])};
  Pid rate[3] = {Pid(config.rate[0]), Pid(config.rate[1]), Pid(config.rate[2])};
  int saturated = 0;
  for (uint64_t k = 0; k < 2000; ++k) {
    Attitude t = imu.TrueAttitude(k);
    ImuSample s = imu.Sample(k);
    const double error[3] = {-t.roll, -t.pitch, -t.yaw};
    double torque[3];
    for (size_t a = 0; a < 3; ++a) {
      torque[a] = rate[a].Step(angle[a].Step(error[a], kDt) - s.gyro[a], kDt);
    }
    saturated += MixQuadX(config.hover_throttle, torque[0], torque[1], torque[2]).saturated;
  }
  EXPECT_GT(saturated, 100);
}

// --- Work set -------------------------------------------------------------------------------

TEST(WorkSetTest, BadSizesAreUsageErrorsNamingTheValue) {
  FlightController c(ControllerConfig::Defaults(kDt), 1);
  for (size_t bytes : {size_t{1}, size_t{63}, size_t{65}, size_t{1000}}) {
    Status s = c.SetWorkSet(bytes, WorkSetMode::kStreaming);
    ASSERT_FALSE(s.ok()) << bytes;
    EXPECT_EQ(s.error().code, ExitCode::kUsage);
    EXPECT_NE(s.error().message.find("--work-set " + std::to_string(bytes) + " bytes"),
              std::string::npos)
        << s.error().message;
    EXPECT_NE(
        s.error().message.find("multiple of 64, e.g. " + std::to_string((bytes / 64 + 1) * 64)),
        std::string::npos)
        << s.error().message;
  }
  EXPECT_TRUE(c.SetWorkSet(0, WorkSetMode::kRandom).ok());
  EXPECT_TRUE(c.SetWorkSet(64, WorkSetMode::kRandom).ok());
  EXPECT_EQ(c.work_set_bytes(), 64u);
}

TEST(WorkSetTest, RandomChainIsOneCycleThroughEveryLine) {
  const size_t lines = 4096;
  FlightController c(ControllerConfig::Defaults(kDt), 9);
  ASSERT_TRUE(c.SetWorkSet(lines * 64, WorkSetMode::kRandom).ok());
  std::vector<int> seen(lines, 0);
  uint64_t at = 0;
  size_t in_order = 0;
  for (size_t i = 0; i < lines; ++i) {
    ++seen[at];
    uint64_t next = c.line_next(at);
    ASSERT_LT(next, lines);
    if (next == at + 1) ++in_order;
    at = next;
  }
  EXPECT_EQ(at, 0u) << "the chain returns to its start after exactly one lap";
  EXPECT_EQ(static_cast<size_t>(std::count(seen.begin(), seen.end(), 1)), lines);
  EXPECT_LT(in_order, lines / 100) << "the order is shuffled";
  // Step() walks that chain: after 3 jobs every line was touched exactly 3 times.
  for (uint64_t k = 0; k < 3; ++k) c.Step(k);
  for (size_t i = 0; i < lines; ++i) ASSERT_EQ(c.line_visits(i), 3u) << "line " << i;
  // Another seed, another chain.
  FlightController d(ControllerConfig::Defaults(kDt), 10);
  ASSERT_TRUE(d.SetWorkSet(lines * 64, WorkSetMode::kRandom).ok());
  size_t same = 0;
  for (size_t i = 0; i < lines; ++i) same += c.line_next(i) == d.line_next(i) ? 1U : 0U;
  EXPECT_LT(same, lines / 100);
}

TEST(WorkSetTest, StreamingTouchesEveryLineEachStep) {
  FlightController c(ControllerConfig::Defaults(kDt), 9);
  ASSERT_TRUE(c.SetWorkSet(1000 * 64, WorkSetMode::kStreaming).ok());
  for (uint64_t k = 0; k < 5; ++k) c.Step(k);
  for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(c.line_visits(i), 5u) << "line " << i;
}

class WorkSetFitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("fc_meminfo_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "_" + std::to_string(MonotonicNs()));
    std::filesystem::create_directories(root_ / "proc");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void WriteMeminfo(const std::string& text) { std::ofstream(root_ / "proc/meminfo") << text; }
  std::filesystem::path root_;
};

TEST_F(WorkSetFitsTest, LargerThanMemAvailableIsAUsageErrorNamingBoth) {
  WriteMeminfo("MemTotal:        4000 kB\nMemFree:    10 kB\nMemAvailable:    1000 kB\n");
  FsRoot root(root_.string());
  EXPECT_TRUE(CheckWorkSetFits(1024000, root).ok());
  Status s = CheckWorkSetFits(1024001, root);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_NE(s.error().message.find("1024001"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("1024000"), std::string::npos) << s.error().message;
}

TEST_F(WorkSetFitsTest, UnreadableMeminfoCannotTell) {
  FsRoot root(root_.string());  // no proc/meminfo
  EXPECT_TRUE(CheckWorkSetFits(size_t{1} << 50, root).ok());
}

// --- Calibration ----------------------------------------------------------------------------

/// Median CLOCK_MONOTONIC time of 201 Step() calls, measured here.
int64_t TestMedianStepNs(FlightController& c, uint64_t first_k) {
  std::vector<int64_t> t;
  for (uint64_t k = first_k; k < first_k + 50; ++k) c.Step(k);
  for (uint64_t k = first_k + 50; k < first_k + 251; ++k) {
    int64_t t0 = MonotonicNs();
    c.Step(k);
    t.push_back(MonotonicNs() - t0);
  }
  std::nth_element(t.begin(), t.begin() + 100, t.end());
  return t[100];
}

TEST(CalibrateExecTest, ReachesTheTargetAndLeavesTheNumericsAlone) {
  FlightController probe(ControllerConfig::Defaults(kDt), 11);
  int64_t base = TestMedianStepNs(probe, 0);
  int64_t target = 20 * base;

  FlightController c(ControllerConfig::Defaults(kDt), 11);
  ASSERT_TRUE(c.SetWorkSet(64 * 64, WorkSetMode::kRandom).ok());
  for (uint64_t k = 0; k < 100; ++k) c.Step(k);
  auto cal = CalibrateExec(c, target);
  ASSERT_TRUE(cal.has_value()) << cal.error().message;
  EXPECT_GT(cal->passes, 0u);
  EXPECT_EQ(c.extra_passes(), cal->passes);
  EXPECT_GT(cal->base_ns, 0);
  EXPECT_GT(cal->measured_ns, target / 2);
  EXPECT_LT(cal->measured_ns, target * 2);

  // The same job, never calibrated, given the same passes: same numbers afterwards.
  FlightController twin(ControllerConfig::Defaults(kDt), 11);
  ASSERT_TRUE(twin.SetWorkSet(64 * 64, WorkSetMode::kRandom).ok());
  for (uint64_t k = 0; k < 100; ++k) twin.Step(k);
  twin.SetExtraPasses(cal->passes);
  EXPECT_EQ(c.checksum(), twin.checksum());
  for (uint64_t k = 100; k < 600; ++k) {
    c.Step(k);
    twin.Step(k);
  }
  EXPECT_EQ(c.checksum(), twin.checksum());
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(c.line_visits(i), twin.line_visits(i));

  // Timed here, independently: the chosen passes make the job about target / base times as
  // long as without them (loose band: the VM steals time). The two are timed interleaved, job
  // by job, so that a change in the machine's speed hits both: timed one after the other, a
  // neighbour that stopped between them (the arm64 stage runs two programs at a time under
  // qemu-user) made the job look twice as fast (ci44: 288 us against a 590 us target).
  FlightController timed(ControllerConfig::Defaults(kDt), 11);
  ASSERT_TRUE(timed.SetWorkSet(64 * 64, WorkSetMode::kRandom).ok());
  std::vector<int64_t> with_passes;
  std::vector<int64_t> without;
  for (uint64_t k = 0; k < 1200; ++k) {
    const bool calibrated = k % 2 == 1;
    timed.SetExtraPasses(calibrated ? cal->passes : 0);
    const int64_t t0 = MonotonicNs();
    timed.Step(k);
    (calibrated ? with_passes : without).push_back(MonotonicNs() - t0);
  }
  auto median = [](std::vector<int64_t> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return static_cast<double>(v[v.size() / 2]);
  };
  const double ratio = median(with_passes) / median(without);
  const double wanted = static_cast<double>(target) / static_cast<double>(cal->base_ns);
  EXPECT_GT(ratio, wanted / 2) << "base " << cal->base_ns << " ns, passes " << cal->passes;
  EXPECT_LT(ratio, wanted * 2) << "base " << cal->base_ns << " ns, passes " << cal->passes;
}

TEST(CalibrateExecTest, TargetBelowOnePassIsAUsageErrorNamingBoth) {
  FlightController c(ControllerConfig::Defaults(kDt), 11);
  c.SetExtraPasses(3);
  auto cal = CalibrateExec(c, 1);
  ASSERT_FALSE(cal.has_value());
  EXPECT_EQ(cal.error().code, ExitCode::kUsage);
  EXPECT_NE(cal.error().message.find("--exec 0.001 us"), std::string::npos) << cal.error().message;
  EXPECT_NE(cal.error().message.find("with no extra passes"), std::string::npos);
  EXPECT_EQ(c.extra_passes(), 3u);  // untouched
  auto zero = CalibrateExec(c, 0);
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().code, ExitCode::kUsage);
}

}  // namespace
}  // namespace rtpulse::control
