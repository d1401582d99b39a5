#include "stats/control_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>
#include <utility>

#include "core/float_compare.h"

namespace rtpulse::stats {
namespace {

// The augmented plant z = [angle, rate, torque, command, disturbance]: command and disturbance
// are constant between events, so dz/dt = A z is exact on every interval.
constexpr int kCostStates = 5;
constexpr int kCostBlock = 2 * kCostStates;  // Van Loan's block matrix.

/// A small dense square matrix, row-major.
class CostMatrix {
 public:
  explicit CostMatrix(int n) : n_(n), v_(static_cast<size_t>(n) * static_cast<size_t>(n), 0.0) {}
  static CostMatrix Identity(int n) {
    CostMatrix m(n);
    for (int i = 0; i < n; ++i) m(i, i) = 1.0;
    return m;
  }
  int size() const { return n_; }
  double& operator()(int r, int c) { return v_[Index(r, c)]; }
  double operator()(int r, int c) const { return v_[Index(r, c)]; }

 private:
  size_t Index(int r, int c) const {
    return static_cast<size_t>(r) * static_cast<size_t>(n_) + static_cast<size_t>(c);
  }
  int n_;
  std::vector<double> v_;
};

CostMatrix CostMatMul(const CostMatrix& a, const CostMatrix& b) {
  const int n = a.size();
  CostMatrix out(n);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < n; ++k) {
      const double aik = a(i, k);
      if (ExactlyEqual(aik, 0.0)) continue;
      for (int j = 0; j < n; ++j) out(i, j) += aik * b(k, j);
    }
  }
  return out;
}

CostMatrix CostMatAdd(const CostMatrix& a, const CostMatrix& b, double b_scale) {
  CostMatrix out = a;
  for (int i = 0; i < a.size(); ++i) {
    for (int j = 0; j < a.size(); ++j) out(i, j) += b_scale * b(i, j);
  }
  return out;
}

double CostMatNorm1(const CostMatrix& a) {
  double best = 0;
  for (int j = 0; j < a.size(); ++j) {
    double col = 0;
    for (int i = 0; i < a.size(); ++i) col += std::abs(a(i, j));
    best = std::max(best, col);
  }
  return best;
}

/// Solves d x = n for x (Gaussian elimination, partial pivoting); d is the Pade denominator,
/// well conditioned after scaling.
CostMatrix CostMatSolve(CostMatrix d, CostMatrix n) {
  const int size = d.size();
  for (int col = 0; col < size; ++col) {
    int pivot = col;
    for (int r = col + 1; r < size; ++r) {
      if (std::abs(d(r, col)) > std::abs(d(pivot, col))) pivot = r;
    }
    if (ExactlyEqual(d(pivot, col), 0.0)) std::abort();  // Cannot happen for a scaled Pade.
    if (pivot != col) {
      for (int j = 0; j < size; ++j) {
        std::swap(d(col, j), d(pivot, j));
        std::swap(n(col, j), n(pivot, j));
      }
    }
    for (int r = 0; r < size; ++r) {
      if (r == col) continue;
      const double f = d(r, col) / d(col, col);
      if (ExactlyEqual(f, 0.0)) continue;
      for (int j = 0; j < size; ++j) {
        d(r, j) -= f * d(col, j);
        n(r, j) -= f * n(col, j);
      }
    }
  }
  for (int r = 0; r < size; ++r) {
    const double inv = 1.0 / d(r, r);
    for (int j = 0; j < size; ++j) n(r, j) *= inv;
  }
  return n;
}

/// e^M by scaling and squaring with the diagonal Pade approximant of degree 6 (Golub & Van
/// Loan, Algorithm 11.3.1): M is scaled to a 1-norm <= 0.5, where the approximant's relative
/// error is below 1e-15.
CostMatrix CostMatExp(const CostMatrix& m) {
  const int n = m.size();
  int squarings = 0;
  const double norm = CostMatNorm1(m);
  if (norm > 0.5) squarings = std::max(0, static_cast<int>(std::ceil(std::log2(norm / 0.5))));
  CostMatrix a = m;
  const double scale = std::ldexp(1.0, -squarings);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) a(i, j) *= scale;
  }
  constexpr int kDegree = 6;
  CostMatrix num = CostMatrix::Identity(n);
  CostMatrix den = CostMatrix::Identity(n);
  CostMatrix power = CostMatrix::Identity(n);
  double c = 1.0;
  for (int k = 1; k <= kDegree; ++k) {
    c = c * (kDegree - k + 1) / (k * (2.0 * kDegree - k + 1));
    power = CostMatMul(power, a);
    num = CostMatAdd(num, power, c);
    den = CostMatAdd(den, power, (k % 2 == 0) ? c : -c);
  }
  CostMatrix e = CostMatSolve(std::move(den), std::move(num));
  for (int s = 0; s < squarings; ++s) e = CostMatMul(e, e);
  return e;
}

using CostVec = std::array<double, kCostStates>;

/// The exact step over h: z(t+h) = phi z(t) and the cost integral over it is z(t)' qd z(t).
struct CostStep {
  CostMatrix phi{kCostStates};
  CostMatrix qd{kCostStates};
};

/// The plant's continuous-time model and cost weights, and the exact steps it needs (one per
/// distinct interval length, cached: under ideal timing there are a handful).
class CostPlant {
 public:
  explicit CostPlant(const ReplaySettings& s) : a_(kCostStates), q_(kCostStates) {
    a_(0, 1) = 1.0;
    a_(1, 2) = 1.0 / s.inertia_kg_m2;
    a_(1, 4) = 1.0 / s.inertia_kg_m2;
    a_(2, 2) = -1.0 / s.motor_time_constant_s;
    a_(2, 3) = s.torque_per_unit_nm / s.motor_time_constant_s;
    q_(0, 0) = s.q_angle;
    q_(1, 1) = s.q_rate;
    q_(3, 3) = s.r_command;
  }

  const CostStep& Step(int64_t h_ns) {
    auto it = cache_.find(h_ns);
    if (it != cache_.end()) return it->second;
    if (cache_.size() > kMaxCached) cache_.clear();
    return cache_.emplace(h_ns, VanLoan(static_cast<double>(h_ns) * 1e-9)).first->second;
  }

 private:
  static constexpr size_t kMaxCached = 1 << 16;

  // Van Loan (1978): e^{[[-A', Q], [0, A]] h} = [[., G], [0, Phi]] with Phi = e^{Ah} and
  // Phi' G = integral_0^h e^{A's} Q e^{As} ds.
  CostStep VanLoan(double h) const {
    CostMatrix block(kCostBlock);
    for (int i = 0; i < kCostStates; ++i) {
      for (int j = 0; j < kCostStates; ++j) {
        block(i, j) = -a_(j, i) * h;
        block(i, j + kCostStates) = q_(i, j) * h;
        block(i + kCostStates, j + kCostStates) = a_(i, j) * h;
      }
    }
    const CostMatrix e = CostMatExp(block);
    CostStep step;
    for (int i = 0; i < kCostStates; ++i) {
      for (int j = 0; j < kCostStates; ++j) step.phi(i, j) = e(i + kCostStates, j + kCostStates);
    }
    for (int i = 0; i < kCostStates; ++i) {
      for (int j = 0; j < kCostStates; ++j) {
        double sum = 0;
        for (int k = 0; k < kCostStates; ++k) sum += step.phi(k, i) * e(k, j + kCostStates);
        step.qd(i, j) = sum;
      }
    }
    for (int i = 0; i < kCostStates; ++i) {
      for (int j = i + 1; j < kCostStates; ++j) {
        const double mean = 0.5 * (step.qd(i, j) + step.qd(j, i));
        step.qd(i, j) = mean;
        step.qd(j, i) = mean;
      }
    }
    return step;
  }

  CostMatrix a_;
  CostMatrix q_;
  std::unordered_map<int64_t, CostStep> cache_;
};

enum class CostEventKind : uint8_t { kSample, kActuate, kMark };

/// One instant of the replay. At equal times, release order, and a job's sampling before its
/// actuation (a zero-delay job applies its own output); marks (disturbance edges, peak
/// evaluation points) change nothing but the disturbance.
struct CostEvent {
  int64_t t_ns;
  uint64_t job;
  CostEventKind kind;
  bool operator<(const CostEvent& o) const {
    if (t_ns != o.t_ns) return t_ns < o.t_ns;
    if (job != o.job) return job < o.job;
    return kind < o.kind;
  }
};

int64_t CostSecondsToNs(double s) {
  return std::llround(s * 1e9);
}

/// The gust torque at t (right-continuous: an edge belongs to the interval it starts).
double CostDisturbanceAt(const ReplaySettings& s, int64_t t_ns) {
  const int64_t at = CostSecondsToNs(s.disturbance_at_s);
  if (t_ns < at) return 0;
  const int64_t on = CostSecondsToNs(s.disturbance_on_s);
  const int64_t repeat = CostSecondsToNs(s.disturbance_repeat_s);
  const int64_t phase = repeat > 0 ? (t_ns - at) % repeat : t_ns - at;
  return (on == 0 || phase < on) ? s.disturbance_nm : 0.0;
}

void AddCostMarks(const ReplaySettings& s, int64_t horizon_ns, std::vector<CostEvent>& events) {
  constexpr uint64_t kNoJob = std::numeric_limits<uint64_t>::max();
  for (int64_t t = s.peak_step_ns; t < horizon_ns; t += s.peak_step_ns) {
    events.push_back({t, kNoJob, CostEventKind::kMark});
  }
  const int64_t at = CostSecondsToNs(s.disturbance_at_s);
  const int64_t on = CostSecondsToNs(s.disturbance_on_s);
  const int64_t repeat = CostSecondsToNs(s.disturbance_repeat_s);
  for (int64_t start = at; start < horizon_ns; start += repeat) {
    events.push_back({start, kNoJob, CostEventKind::kMark});
    if (on > 0 && start + on < horizon_ns) {
      events.push_back({start + on, kNoJob, CostEventKind::kMark});
    }
    if (repeat == 0) break;
  }
}

struct CostRun {
  double cost = 0;
  double peak_rad = 0;
  int64_t worst_stall_ns = 0;
  uint64_t beyond_horizon = 0;
};

double EffectiveKp(const ReplaySettings& s) {
  return ExactlyEqual(s.kp, 0.0) ? kDefaultKp : s.kp;
}
double EffectiveKd(const ReplaySettings& s) {
  return ExactlyEqual(s.kd, 0.0) ? kDefaultKd : s.kd;
}

int64_t CostHorizonNs(const std::vector<ReplayJob>& jobs, const ReplaySettings& s) {
  if (s.horizon_s > 0) return CostSecondsToNs(s.horizon_s);
  return static_cast<int64_t>(jobs.size()) * s.period_ns;
}

CostRun SimulateCost(const std::vector<ReplayJob>& jobs, const ReplaySettings& s,
                     CostPlant& plant) {
  const int64_t horizon_ns = CostHorizonNs(jobs, s);
  std::vector<CostEvent> events;
  events.reserve(2 * jobs.size() + static_cast<size_t>(horizon_ns / s.peak_step_ns) + 16);
  CostRun run;
  for (uint64_t k = 0; k < jobs.size(); ++k) {
    const ReplayJob& j = jobs[k];
    if (!j.executed) continue;
    const int64_t release = static_cast<int64_t>(k) * s.period_ns;
    if (release + j.actuation_offset_ns > horizon_ns) ++run.beyond_horizon;
    if (release + j.sample_offset_ns <= horizon_ns) {
      events.push_back({release + j.sample_offset_ns, k, CostEventKind::kSample});
    }
    if (release + j.actuation_offset_ns <= horizon_ns) {
      events.push_back({release + j.actuation_offset_ns, k, CostEventKind::kActuate});
    }
  }
  AddCostMarks(s, horizon_ns, events);
  std::sort(events.begin(), events.end());

  const double kp = EffectiveKp(s);
  const double kd = EffectiveKd(s);
  CostVec z{s.initial_angle_rad, 0, 0, 0, CostDisturbanceAt(s, 0)};
  run.peak_rad = std::abs(z[0]);
  std::vector<double> pending(jobs.size(), 0.0);
  int64_t now = 0;
  int64_t last_actuation = 0;
  auto advance_to = [&](int64_t t) {
    if (t <= now) return;
    const CostStep& step = plant.Step(t - now);
    CostVec next{};
    double cost = 0;
    for (int i = 0; i < kCostStates; ++i) {
      double row = 0;
      double qrow = 0;
      for (int c = 0; c < kCostStates; ++c) {
        row += step.phi(i, c) * z[static_cast<size_t>(c)];
        qrow += step.qd(i, c) * z[static_cast<size_t>(c)];
      }
      next[static_cast<size_t>(i)] = row;
      cost += z[static_cast<size_t>(i)] * qrow;
    }
    run.cost += cost;
    z = next;
    run.peak_rad = std::max(run.peak_rad, std::abs(z[0]));
    now = t;
  };
  for (const CostEvent& e : events) {
    advance_to(e.t_ns);
    if (e.kind == CostEventKind::kSample) {
      pending[e.job] = -(kp * z[0] + kd * z[1]);
    } else if (e.kind == CostEventKind::kActuate) {
      z[3] = pending[e.job];
      run.worst_stall_ns = std::max(run.worst_stall_ns, e.t_ns - last_actuation);
      last_actuation = e.t_ns;
    }
    z[4] = CostDisturbanceAt(s, now);
  }
  advance_to(horizon_ns);
  run.worst_stall_ns = std::max(run.worst_stall_ns, horizon_ns - last_actuation);
  return run;
}

Error CostSettingError(const char* name, double value, const char* fix) {
  return UsageError(fmt::format("control cost: {} {} is out of range; {}", name, value, fix));
}

Status CheckReplaySettings(const ReplaySettings& s) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  auto non_negative = [](double v) { return std::isfinite(v) && v >= 0; };
  if (s.period_ns <= 0) {
    return CostSettingError("period", static_cast<double>(s.period_ns), "give a period > 0 ns");
  }
  if (s.peak_step_ns <= 0) {
    return CostSettingError("peak step", static_cast<double>(s.peak_step_ns), "give a step > 0 ns");
  }
  if (!positive(s.inertia_kg_m2)) return CostSettingError("inertia", s.inertia_kg_m2, "use > 0");
  if (!positive(s.torque_per_unit_nm)) {
    return CostSettingError("torque per unit", s.torque_per_unit_nm, "use > 0");
  }
  if (!positive(s.motor_time_constant_s)) {
    return CostSettingError("motor time constant", s.motor_time_constant_s, "use > 0 s");
  }
  if (!std::isfinite(s.kp) || !std::isfinite(s.kd)) {
    return CostSettingError("gain", std::isfinite(s.kp) ? s.kd : s.kp, "use a finite gain");
  }
  if (!non_negative(s.q_angle) || !non_negative(s.q_rate) || !non_negative(s.r_command)) {
    return CostSettingError("cost weight",
                            !non_negative(s.q_angle)  ? s.q_angle
                            : !non_negative(s.q_rate) ? s.q_rate
                                                      : s.r_command,
                            "weights are >= 0");
  }
  if (!std::isfinite(s.initial_angle_rad) || !std::isfinite(s.disturbance_nm)) {
    return CostSettingError(
        "initial angle or disturbance",
        std::isfinite(s.initial_angle_rad) ? s.disturbance_nm : s.initial_angle_rad,
        "use a finite value");
  }
  if (!non_negative(s.disturbance_at_s)) {
    return CostSettingError("disturbance start", s.disturbance_at_s, "use >= 0 s");
  }
  if (!non_negative(s.disturbance_on_s)) {
    return CostSettingError("disturbance duration", s.disturbance_on_s, "use >= 0 s");
  }
  if (!non_negative(s.disturbance_repeat_s) ||
      (s.disturbance_repeat_s > 0 &&
       (s.disturbance_on_s <= 0 || s.disturbance_on_s > s.disturbance_repeat_s))) {
    return CostSettingError("disturbance repeat", s.disturbance_repeat_s,
                            "a repeated gust needs 0 < duration <= repeat (0: one gust)");
  }
  if (!non_negative(s.horizon_s)) {
    return CostSettingError("horizon", s.horizon_s, "use > 0 s, or 0 for the jobs' span");
  }
  return Status::Ok();
}

Status CheckReplayJobs(const std::vector<ReplayJob>& jobs) {
  if (jobs.empty()) {
    return UsageError("control cost: no job to replay; record at least one release");
  }
  for (size_t k = 0; k < jobs.size(); ++k) {
    const ReplayJob& j = jobs[k];
    if (!j.executed) continue;
    if (j.sample_offset_ns < 0 || j.actuation_offset_ns < 0) {
      return UsageError(fmt::format(
          "control cost: job {}: {} offset {} ns is negative; offsets are measured from the "
          "job's release and are >= 0",
          k, j.sample_offset_ns < 0 ? "sample" : "actuation",
          j.sample_offset_ns < 0 ? j.sample_offset_ns : j.actuation_offset_ns));
    }
    if (j.actuation_offset_ns < j.sample_offset_ns) {
      return UsageError(fmt::format(
          "control cost: job {}: actuation offset {} ns is before its sample offset {} ns; "
          "a job applies its output after it reads the plant",
          k, j.actuation_offset_ns, j.sample_offset_ns));
    }
  }
  return Status::Ok();
}

/// The peak-evaluation points are held in memory with the events: a horizon that needs more
/// than this many is refused rather than exhausting it (40 s at 0.5 ms needs 80,000).
constexpr double kMaxCostPoints = 2e7;

Status CheckReplaySize(const std::vector<ReplayJob>& jobs, const ReplaySettings& s) {
  const double horizon_s =
      s.horizon_s > 0 ? s.horizon_s
                      : static_cast<double>(jobs.size()) * static_cast<double>(s.period_ns) * 1e-9;
  const double points = horizon_s / (static_cast<double>(s.peak_step_ns) * 1e-9);
  if (points > kMaxCostPoints) {
    return UsageError(fmt::format(
        "control cost: a horizon of {} s evaluated every {} ms needs {:.3g} points, more than "
        "{:.0e}; give a shorter horizon or a longer peak step",
        horizon_s, static_cast<double>(s.peak_step_ns) * 1e-6, points, kMaxCostPoints));
  }
  return Status::Ok();
}

}  // namespace

Expected<ReplayResult> ReplayControlCost(const std::vector<ReplayJob>& jobs,
                                         const ReplaySettings& settings) {
  if (Status st = CheckReplaySettings(settings); !st) return st.error();
  if (Status st = CheckReplayJobs(jobs); !st) return st.error();
  if (Status st = CheckReplaySize(jobs, settings); !st) return st.error();
  CostPlant plant(settings);
  const std::vector<ReplayJob> ideal_jobs(jobs.size(), ReplayJob{});
  const CostRun ideal = SimulateCost(ideal_jobs, settings, plant);
  const CostRun measured = SimulateCost(jobs, settings, plant);
  ReplayResult r;
  r.cost = measured.cost;
  r.ideal_cost = ideal.cost;
  r.cost_increase_pct = ideal.cost > 0 ? 100.0 * (measured.cost / ideal.cost - 1.0)
                                       : std::numeric_limits<double>::quiet_NaN();
  r.peak_error_rad = measured.peak_rad;
  r.ideal_peak_error_rad = ideal.peak_rad;
  r.worst_stall_ns = measured.worst_stall_ns;
  r.beyond_horizon = measured.beyond_horizon;
  for (const ReplayJob& j : jobs) (j.executed ? r.jobs : r.skipped) += 1;
  r.horizon_s = static_cast<double>(CostHorizonNs(jobs, settings)) * 1e-9;
  r.outside_model = !std::isfinite(r.cost) || !std::isfinite(r.peak_error_rad) ||
                    r.peak_error_rad > kReplayModelRangeRad;
  return r;
}

std::string DescribeReplaySettings(const ReplaySettings& s) {
  std::string out;
  out += fmt::format(
      "model: linearised quadrotor roll axis, x = [angle, rate, torque]; angle' = rate, "
      "rate' = (torque + d)/J, torque' = (K u - torque)/tau; J = {} kg m^2, K = {} N m per "
      "unit command, tau = {} s\n",
      s.inertia_kg_m2, s.torque_per_unit_nm, s.motor_time_constant_s);
  out += fmt::format(
      "controller: u = -(kp angle + kd rate) sampled at each job's start, applied at its end, "
      "held until the next; kp = {} 1/rad, kd = {} s/rad{}; period {} ms\n",
      EffectiveKp(s), EffectiveKd(s),
      ExactlyEqual(s.kp, 0.0) && ExactlyEqual(s.kd, 0.0) ? " (defaults)" : "",
      static_cast<double>(s.period_ns) * 1e-6);
  out += fmt::format(
      "cost: integral of {} angle^2 + {} rate^2 + {} u^2 dt (rad, rad/s, unit command); "
      "initial angle {} rad\n",
      s.q_angle, s.q_rate, s.r_command, s.initial_angle_rad);
  if (s.disturbance_repeat_s > 0) {
    out += fmt::format("disturbance: {} N m gusts of {} s every {} s from {} s\n", s.disturbance_nm,
                       s.disturbance_on_s, s.disturbance_repeat_s, s.disturbance_at_s);
  } else if (s.disturbance_on_s > 0) {
    out += fmt::format("disturbance: one {} N m gust of {} s at {} s\n", s.disturbance_nm,
                       s.disturbance_on_s, s.disturbance_at_s);
  } else {
    out += fmt::format("disturbance: a {} N m step from {} s on\n", s.disturbance_nm,
                       s.disturbance_at_s);
  }
  out += s.horizon_s > 0 ? fmt::format("horizon: {} s from the first release\n", s.horizon_s)
                         : std::string("horizon: the releases' span, jobs x period\n");
  out += fmt::format(
      "integration: exact (matrix exponential between events, Van Loan for the cost "
      "integral); peak |angle| at every event and every {} ms\n",
      static_cast<double>(s.peak_step_ns) * 1e-6);
  return out;
}

std::string FormatCostIncreasePct(double pct) {
  // One decimal hides a small but real effect as "+0.0 %": below 0.1 % two significant
  // digits are shown instead ("+0.0042 %"); exactly 0 stays "+0.0".
  if (std::fabs(pct) > 0.0 && std::fabs(pct) < 0.1) return fmt::format("{:+.2g}", pct);
  return fmt::format("{:+.1f}", pct);
}

std::string DescribeReplayResult(const ReplayResult& r) {
  constexpr double kDegPerRad = 180.0 / 3.14159265358979323846;
  if (r.outside_model) {
    const std::string peak = std::isfinite(r.peak_error_rad)
                                 ? fmt::format("{:.1f} deg", r.peak_error_rad * kDegPerRad)
                                 : std::string("without bound");
    return fmt::format(
        "control lost: under the measured timing (worst stall {:.1f} ms) the attitude error "
        "grows {} (ideal timing {:.2f} deg), beyond the linearised model's {:.0f} deg range, so "
        "no cost percentage is given",
        static_cast<double>(r.worst_stall_ns) * 1e-6,
        std::isfinite(r.peak_error_rad) ? "to " + peak : peak, r.ideal_peak_error_rad * kDegPerRad,
        kReplayModelRangeRad * kDegPerRad);
  }
  const std::string cost =
      std::isnan(r.cost_increase_pct)
          ? std::string("cost vs ideal timing unknown (the ideal cost is 0)")
          : fmt::format("{} % cost vs ideal timing", FormatCostIncreasePct(r.cost_increase_pct));
  std::string out =
      fmt::format("{}; worst stall {:.1f} ms, peak error {:.2f} deg (ideal {:.2f} deg)", cost,
                  static_cast<double>(r.worst_stall_ns) * 1e-6, r.peak_error_rad * kDegPerRad,
                  r.ideal_peak_error_rad * kDegPerRad);
  if (r.beyond_horizon > 0) {
    out += fmt::format("; {} actuation(s) after the horizon not replayed", r.beyond_horizon);
  }
  return out;
}

}  // namespace rtpulse::stats
