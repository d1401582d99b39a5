#pragma once

// The numerical side of the extreme value statistics (docs/wcet.md): generalised Pareto and
// GEV / Gumbel fits by maximum likelihood (with their optimisers) and the quantiles of the
// fitted models. stats/evt.h includes this; include it alone for the fits only.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rtpulse::stats {

/// How a generalised Pareto fit was obtained.
enum class GpdMethod {
  kNone,  ///< No fit was attempted (too few exceedances).
  kMle,   ///< Profile maximum likelihood.
  kPwm,   ///< Probability-weighted moments (the MLE was not regular or not found).
};

/// How a GEV fit was obtained.
enum class GevMethod {
  kNone,       ///< No fit was attempted (too few blocks).
  kMle,        ///< Maximum likelihood over (mu, sigma, xi) (Nelder-Mead).
  kGumbelMle,  ///< Maximum likelihood with xi fixed at 0 (Gumbel).
};

/// The name in the JSON and text outputs: "", "mle" or "pwm".
std::string_view GpdMethodName(GpdMethod method);
/// The name in the JSON and text outputs: "", "mle" or "gumbel-mle".
std::string_view GevMethodName(GevMethod method);

/// A generalised Pareto fit to exceedances y = x - u > 0:
/// P(Y > y) = (1 + xi*y/sigma)^(-1/xi), or exp(-y/sigma) when xi = 0.
struct GpdFit {
  bool ok = false;
  double xi = 0;
  double sigma_ns = 0;
  double xi_se = 0;  ///< Asymptotic standard error of xi: (1 + xi)/sqrt(n).
  double log_likelihood = 0;
  GpdMethod method = GpdMethod::kNone;
  std::string note;  ///< Why the MLE was not used, when it was not.
};

/// A GEV fit to block maxima: G(x) = exp(-(1 + xi*(x-mu)/sigma)^(-1/xi)), Gumbel when xi = 0.
struct GevFit {
  bool ok = false;
  double mu_ns = 0;
  double sigma_ns = 0;
  double xi = 0;
  double log_likelihood = 0;
  GevMethod method = GevMethod::kNone;
};

/// Fits a GPD to exceedances (> 0) by profile maximum likelihood over theta = xi/sigma
/// (grid + golden section), falling back to probability-weighted moments when the MLE is
/// on the edge of its domain or xi < -0.5 (where MLE is not regular).
GpdFit FitGpd(const std::vector<double>& excesses);
/// Fits a GEV (Nelder-Mead over mu, log sigma, xi from several starts).
GevFit FitGev(const std::vector<double>& maxima);
/// Fits a Gumbel (GEV with xi = 0) by maximum likelihood.
GevFit FitGumbel(const std::vector<double>& maxima);
/// GPD-tail latency with P(X > x) = p, given P(X > u) = rate.
double GpdQuantile(const GpdFit& fit, double threshold, double rate, double p);
/// GEV-of-block-maxima latency exceeded with probability p per activation (blocks of m).
double GevQuantile(const GevFit& fit, size_t block_size, double p);

}  // namespace rtpulse::stats
