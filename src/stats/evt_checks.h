#pragma once

// The independence and stationarity checks behind the extreme value estimates
// (docs/wcet.md): Ljung-Box, the runs test, the extremal index, and the chi-square
// distribution they are judged with. stats/evt.h includes this.

#include <string>
#include <string_view>
#include <vector>

namespace rtpulse::stats {

/// What a check concluded.
enum class CheckVerdict {
  kPass,     ///< The data do not contradict the assumption.
  kWarn,     ///< The assumption looks violated (the report carries a warning).
  kSkipped,  ///< Too little data to run the check.
};

/// The name in the JSON and text outputs: "pass", "warn" or "skipped".
std::string_view CheckVerdictName(CheckVerdict verdict);

/// One independence or stationarity check.
struct EvtCheck {
  std::string name;        ///< "ljung-box", "runs", "extremal-index", "stationarity".
  std::string applied_to;  ///< What series it ran on.
  double statistic = 0;
  double p_value = 0;  ///< NaN for checks judged by a threshold instead.
  CheckVerdict verdict = CheckVerdict::kPass;
  std::string detail;  ///< One sentence: what it means here.
};

/// Regularised lower incomplete gamma P(a, x) (series / continued fraction).
double RegularizedGammaP(double a, double x);
/// Chi-square upper tail P(X > x) with k degrees of freedom.
double ChiSquarePValue(double x, double dof);
/// Ljung-Box Q over lags 1..lags, with its chi-square(lags) p-value. The verdict is kPass or
/// kSkipped: judging the p-value against a level is the caller's.
EvtCheck LjungBox(const std::vector<double>& series, int lags);
/// Wald-Wolfowitz runs test above/below the median (two-sided normal p-value); verdict as
/// for LjungBox().
EvtCheck RunsTest(const std::vector<double>& series);
/// Ferro-Segers intervals estimate of the extremal index of exceedances over `threshold`
/// (1 = isolated exceedances, small = clusters); NaN with fewer than 3 exceedances.
double ExtremalIndex(const std::vector<double>& series, double threshold);

}  // namespace rtpulse::stats
