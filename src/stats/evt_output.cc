// The extreme value report as JSON and as a text table (docs/wcet.md). The only place the
// status enums become the strings users see.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "stats/evt.h"

namespace rtpulse::stats {
namespace {

nlohmann::json Num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json LevelsJson(const std::vector<ReturnLevel>& levels) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& l : levels) {
    out.push_back({{"probability", l.probability},
                   {"estimate_ns", Num(l.estimate_ns)},
                   {"ci_low_ns", Num(l.ci_low_ns)},
                   {"ci_high_ns", Num(l.ci_high_ns)}});
  }
  return out;
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
  if (!std::isfinite(ns)) return "-";
  return fmt::format("{:.1f}", ns / 1e3);
}

std::string LevelCell(const std::vector<ReturnLevel>& levels, size_t k) {
  if (k >= levels.size()) return "-";
  const auto& l = levels[k];
  if (!std::isfinite(l.ci_low_ns)) return Us(l.estimate_ns);
  return fmt::format("{} [{}, {}]", Us(l.estimate_ns), Us(l.ci_low_ns), Us(l.ci_high_ns));
}

}  // namespace

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
  return {
      {"disclaimer", kEvtDisclaimer},
      {"options",
       {{"block_size", o.block_size},
        {"threshold_quantile", o.threshold_quantile ? Num(*o.threshold_quantile) : nullptr},
        {"bootstrap", o.bootstrap},
        {"bootstrap_method", "parametric"},
        {"seed", o.seed},
        {"confidence", o.confidence},
        {"alpha", o.alpha},
        {"probabilities", o.probabilities}}},
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
        {"levels", LevelsJson(r.pot.levels)},
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
        {"levels", LevelsJson(r.bm.levels)},
        {"bootstrap_failures", r.bm.bootstrap_failures}}},
      {"checks", checks},
      {"warnings", r.warnings},
  };
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
  // The interval columns are labelled with the level the bootstrap used.
  const std::string ci = ConfidenceLabel(r.options.confidence);
  const std::string_view bm_model = BlockMaximaModelName(r.bm.levels_model);
  line(fmt::format("  {:>10}  {:>32}  {:>32}", "p/activ.",
                   fmt::format("POT latency us [{} CI]", ci),
                   fmt::format("BM ({}) us [{} CI]", bm_model.empty() ? "-" : bm_model, ci)));
  for (size_t k = 0; k < r.options.probabilities.size(); ++k) {
    line(fmt::format("  {:>10.0e}  {:>32}  {:>32}", r.options.probabilities[k],
                     LevelCell(r.pot.levels, k), LevelCell(r.bm.levels, k)));
  }
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
