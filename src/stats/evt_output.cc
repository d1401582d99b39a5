// The extreme value report as JSON and as a text table (docs/wcet.md). The only place the
// status enums become the strings users see.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "stats/evt.h"
#include "stats/evt_internal.h"

namespace rtpulse::stats {
namespace {

nlohmann::json Num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json LevelsJson(const std::vector<ReturnLevel>& levels) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& l : levels) {
    out.push_back(
        {{"probability", l.probability},
         {"estimate_ns", Num(l.estimate_ns)},
         {"ci_low_ns", Num(l.ci_low_ns)},
         {"ci_high_ns", Num(l.ci_high_ns)},
         {"ci_high_unbounded", std::isinf(l.ci_high_ns) && l.ci_high_ns > 0},
         {"refusal", l.refusal.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.refusal)}});
  }
  return out;
}

/// The model's numbers where some are refused, marked for what they are; null when every
/// level is reported (then `levels` holds them all).
nlohmann::json RawFitJson(const std::vector<ReturnLevel>& levels,
                          const std::vector<ReturnLevel>& raw, const EstimateTrust& trust) {
  if (raw.empty()) return nullptr;
  std::string reason;
  if (!trust.trusted) {
    reason = "no trustworthy estimate: " + trust.reason;
  } else {
    for (const auto& l : levels) {
      if (!l.refusal.empty()) {
        reason = l.refusal;
        break;
      }
    }
  }
  if (reason.empty()) return nullptr;
  return {{"untrusted", true},
          {"reason", reason},
          {"note",
           "the fitted model evaluated at every probability, including those refused in "
           "`levels`: not estimates the data support"},
          {"levels", LevelsJson(raw)}};
}

/// Adds what the reporting rule decided for one method.
void AddTrust(nlohmann::json& method, const std::vector<ReturnLevel>& levels,
              const std::vector<ReturnLevel>& raw, const EstimateTrust& t) {
  method["trusted"] = t.trusted;
  method["refusal"] = t.trusted ? nlohmann::json(nullptr) : nlohmann::json(t.reason);
  method["min_probability"] = Num(t.min_probability);
  method["levels"] = LevelsJson(levels);
  method["raw_fit"] = RawFitJson(levels, raw, t);
}

nlohmann::json GpdJson(const GpdFit& f) {
  return {{"ok", f.ok},
          {"xi", Num(f.xi)},
          {"xi_se", Num(f.xi_se)},
          {"sigma_ns", Num(f.sigma_ns)},
          {"log_likelihood", Num(f.log_likelihood)},
          {"method", GpdMethodName(f.method)},
          {"note", f.note}};
}

nlohmann::json GevJson(const GevFit& f) {
  return {{"ok", f.ok},
          {"mu_ns", Num(f.mu_ns)},
          {"sigma_ns", Num(f.sigma_ns)},
          {"xi", Num(f.xi)},
          {"log_likelihood", Num(f.log_likelihood)},
          {"method", GevMethodName(f.method)}};
}

std::string Us(double ns) {
  return evt_internal::FormatUs(ns);
}

std::string LevelCell(const std::vector<ReturnLevel>& levels, const EstimateTrust& trust,
                      size_t k) {
  if (k >= levels.size())
    return trust.trusted || trust.reason.empty() ? "-" : "no trustworthy estimate";
  const auto& l = levels[k];
  if (!l.refusal.empty())
    return trust.trusted ? "beyond supported range" : "no trustworthy estimate";
  if (std::isnan(l.ci_low_ns)) return Us(l.estimate_ns);
  return fmt::format("{} [{}, {}]", Us(l.estimate_ns), Us(l.ci_low_ns), Us(l.ci_high_ns));
}

}  // namespace

namespace evt_internal {

std::string FormatUs(double ns) {
  if (std::isnan(ns)) return "-";
  if (std::isinf(ns)) return ns > 0 ? "unbounded" : "-unbounded";
  const double us = ns / 1e3;
  if (std::fabs(us) < 1e6) return fmt::format("{:.1f}", us);
  return fmt::format("{:.2e}", us);
}

}  // namespace evt_internal

std::string_view GpdMethodName(GpdMethod method) {
  switch (method) {
    case GpdMethod::kNone:
      return "";
    case GpdMethod::kMle:
      return "mle";
    case GpdMethod::kPwm:
      return "pwm";
  }
  return "?";
}

std::string_view GevMethodName(GevMethod method) {
  switch (method) {
    case GevMethod::kNone:
      return "";
    case GevMethod::kMle:
      return "mle";
    case GevMethod::kGumbelMle:
      return "gumbel-mle";
  }
  return "?";
}

std::string_view CheckVerdictName(CheckVerdict verdict) {
  switch (verdict) {
    case CheckVerdict::kPass:
      return "pass";
    case CheckVerdict::kWarn:
      return "warn";
    case CheckVerdict::kSkipped:
      return "skipped";
  }
  return "?";
}

std::string_view BlockMaximaModelName(BlockMaximaModel model) {
  switch (model) {
    case BlockMaximaModel::kNone:
      return "";
    case BlockMaximaModel::kGev:
      return "gev";
    case BlockMaximaModel::kGumbel:
      return "gumbel";
  }
  return "?";
}

std::string ReportingRule(const EvtOptions& o) {
  return fmt::format(
      "estimates are reported only down to p = 10^-{:g}/n per activation ({:g} orders of "
      "magnitude below 1/n, n = the samples the method used), and not at all with fewer than {} "
      "exceedances (POT) or {} blocks (block maxima), a poorly determined POT shape (standard "
      "error above {:g}), a Ljung-Box, runs or stationarity p-value below {:.3g} (alpha/3), or "
      "(POT) an extremal index below 0.7",
      o.max_extrapolation_decades, o.max_extrapolation_decades, evt_internal::kFewExceedances,
      evt_internal::kFewBlocks, evt_internal::kMaxXiSe, RefusalLevel(o.alpha));
}

std::string ConfidenceLabel(double confidence) {
  return fmt::format("{:g}%", confidence * 100);
}

nlohmann::json ToJson(const EvtReport& r) {
  const EvtOptions& o = r.options;
  nlohmann::json diagnostics = nlohmann::json::array();
  for (const auto& d : r.pot.diagnostics) {
    diagnostics.push_back({{"quantile", d.quantile},
                           {"threshold_ns", d.threshold_ns},
                           {"exceedances", d.exceedances},
                           {"mean_excess_ns", Num(d.mean_excess_ns)},
                           {"fit", GpdJson(d.fit)},
                           {"modified_scale_ns", Num(d.modified_scale_ns)}});
  }
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.checks) {
    checks.push_back({{"name", c.name},
                      {"applied_to", c.applied_to},
                      {"statistic", Num(c.statistic)},
                      {"p_value", Num(c.p_value)},
                      {"verdict", CheckVerdictName(c.verdict)},
                      {"detail", c.detail}});
  }
  nlohmann::json out = {
      {"disclaimer", kEvtDisclaimer},
      {"reporting_rule", ReportingRule(o)},
      {"options",
       {{"block_size", o.block_size},
        {"threshold_quantile", o.threshold_quantile ? Num(*o.threshold_quantile) : nullptr},
        {"bootstrap", o.bootstrap},
        {"bootstrap_method", "parametric"},
        {"seed", o.seed},
        {"confidence", o.confidence},
        {"alpha", o.alpha},
        {"probabilities", o.probabilities},
        {"max_extrapolation_decades", o.max_extrapolation_decades}}},
      {"samples", r.samples},
      {"min_ns", Num(r.min_ns)},
      {"max_ns", Num(r.max_ns)},
      {"pot",
       {{"ok", r.pot_ok},
        {"threshold_quantile", r.pot.threshold_quantile},
        {"threshold_ns", Num(r.pot.threshold_ns)},
        {"threshold_auto", r.pot.threshold_auto},
        {"threshold_reason", r.pot.threshold_reason},
        {"exceedances", r.pot.exceedances},
        {"exceedance_rate", r.pot.exceedance_rate},
        {"fit", GpdJson(r.pot.fit)},
        {"bootstrap_failures", r.pot.bootstrap_failures},
        {"diagnostics", diagnostics}}},
      {"block_maxima",
       {{"ok", r.bm_ok},
        {"block_size", r.bm.block_size},
        {"blocks", r.bm.blocks},
        {"gev", GevJson(r.bm.gev)},
        {"gumbel", GevJson(r.bm.gumbel)},
        {"lr_statistic", Num(r.bm.lr_statistic)},
        {"lr_p_value", Num(r.bm.lr_p_value)},
        {"gumbel_sufficient", r.bm.gumbel_sufficient},
        {"levels_model", BlockMaximaModelName(r.bm.levels_model)},
        {"bootstrap_failures", r.bm.bootstrap_failures}}},
      {"checks", checks},
      {"warnings", r.warnings},
  };
  AddTrust(out["pot"], r.pot.levels, r.pot.raw_levels, r.pot.trust);
  AddTrust(out["block_maxima"], r.bm.levels, r.bm.raw_levels, r.bm.trust);
  return out;
}

std::string FormatEvtReport(const EvtReport& r) {
  std::string s;
  auto line = [&s](const std::string& text) { s += text + "\n"; };
  line(fmt::format("  {} samples, observed max {} us", r.samples, Us(r.max_ns)));
  if (r.pot_ok || !r.pot.threshold_reason.empty()) {
    line(fmt::format("  POT: threshold {} us (quantile {}, {}), {} exceedances",
                     Us(r.pot.threshold_ns), r.pot.threshold_quantile,
                     r.pot.threshold_auto ? "automatic" : "given", r.pot.exceedances));
  }
  if (r.pot_ok) {
    const GpdFit& f = r.pot.fit;
    line(fmt::format("       GPD xi = {:.3f} +- {:.3f}, sigma = {} us ({})", f.xi, f.xi_se,
                     Us(f.sigma_ns), GpdMethodName(f.method)));
  }
  if (r.bm_ok) {
    line(fmt::format("  Block maxima: {} blocks of {}, GEV xi = {:.3f}, Gumbel LR p = {:.3g} -> {}",
                     r.bm.blocks, r.bm.block_size, r.bm.gev.xi, r.bm.lr_p_value,
                     r.bm.gumbel_sufficient ? "Gumbel is enough" : "GEV needed"));
  }
  line("  Rule: " + ReportingRule(r.options));
  const auto limit = [](const EstimateTrust& t) {
    if (!t.trusted) return std::string("none (no trustworthy estimate)");
    return fmt::format("p >= {:.2g}", t.min_probability);
  };
  line(fmt::format("  Supported range per activation: POT {}, block maxima {}", limit(r.pot.trust),
                   limit(r.bm.trust)));
  // The interval columns are labelled with the level the bootstrap used.
  const std::string ci = ConfidenceLabel(r.options.confidence);
  const std::string_view bm_model = BlockMaximaModelName(r.bm.levels_model);
  line(fmt::format("  {:>10}  {:>32}  {:>32}", "p/activ.",
                   fmt::format("POT latency us [{} CI]", ci),
                   fmt::format("BM ({}) us [{} CI]", bm_model.empty() ? "-" : bm_model, ci)));
  for (size_t k = 0; k < r.options.probabilities.size(); ++k) {
    line(fmt::format("  {:>10.0e}  {:>32}  {:>32}", r.options.probabilities[k],
                     LevelCell(r.pot.levels, r.pot.trust, k),
                     LevelCell(r.bm.levels, r.bm.trust, k)));
  }
  if (!r.pot.trust.trusted) line("  POT: no trustworthy estimate: " + r.pot.trust.reason);
  if (!r.bm.trust.trusted) line("  Block maxima: no trustworthy estimate: " + r.bm.trust.reason);
  line("  Checks:");
  for (const auto& c : r.checks) {
    line(fmt::format("    {:<15} {:<5} stat {:>8.3g}  p {:>8}  ({})", c.name,
                     CheckVerdictName(c.verdict), c.statistic,
                     std::isfinite(c.p_value) ? fmt::format("{:.3g}", c.p_value) : "-",
                     c.applied_to));
  }
  for (const auto& w : r.warnings) line("  warning: " + w);
  line(fmt::format("  NOTE: {}", kEvtDisclaimer));
  return s;
}

}  // namespace rtpulse::stats
