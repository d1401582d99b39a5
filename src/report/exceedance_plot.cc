#include "report/exceedance_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/atomic_file.h"
#include "core/file_owner.h"
#include "report/figure.h"

namespace rtpulse::report {

namespace {

/// A horizontal line at the supported range's limit (docs/wcet.md, "What is reported"): the
/// model curves below it are not estimates the data support. None when the method reports
/// nothing.
std::string RangeLine(const stats::EvtReport& r) {
  double limit = 0;
  for (const auto* t : {&r.pot.trust, &r.bm.trust}) {
    if (t->trusted && std::isfinite(t->min_probability))
      limit = std::max(limit, t->min_probability);
  }
  if (!(limit > 0)) return "";
  return fmt::format(
      "set arrow from graph 0, first {0:.3g} to graph 1, first {0:.3g} nohead front lw 1.5 dt 2 lc "
      "rgb '#606060'\n"
      "set label 'supported range ends (p = {0:.3g})' at graph 0.02, first {0:.3g} offset 0,0.7 "
      "front "
      "tc rgb '#606060' noenhanced\n",
      limit);
}

}  // namespace

std::string ExceedanceData(const stats::EvtReport& r) {
  std::string s = "# rtpulse wcet exceedance plot; latencies in microseconds\n";
  s += "# empirical: latency_us P(X>x) (rank/(n+1))\n";
  const auto& c = r.curve;
  for (size_t i = 0; i < c.empirical_ns.size(); ++i) {
    s += fmt::format("{:.4f} {:.6e}\n", c.empirical_ns[i] / 1e3, c.empirical_probability[i]);
  }
  s += "\n\n# model: latency_us P_pot P_block_maxima (NaN: outside the model)\n";
  for (size_t i = 0; i < c.model_ns.size(); ++i) {
    auto p = [](double v) { return std::isfinite(v) && v > 0 ? fmt::format("{:.6e}", v) : "NaN"; };
    s += fmt::format("{:.4f} {} {}\n", c.model_ns[i] / 1e3, p(c.pot_probability[i]),
                     p(c.bm_probability[i]));
  }
  return s;
}

std::string ExceedanceScript(const std::string& scenario, const stats::EvtReport& r) {
  return fmt::format(
      "# Exceedance plot for scenario '{}': render with `gnuplot exceedance.gp` in this folder.\n"
      "# A statistical extrapolation from the measured samples, not a guarantee.\n"
      "set terminal svg size 900,600 dynamic\n"
      "set output 'exceedance.svg'\n"
      "set title \"{}: P(latency > x) per activation (extrapolation, not a guarantee)\" "
      "noenhanced\n"
      "set xlabel 'latency (us)'\n"
      "set ylabel 'exceedance probability per activation'\n"
      "set logscale y\n"
      "set format y '10^{{%L}}'\n"
      "set yrange [1e-13:1]\n"
      "set grid\n"
      "set key top right\n"
      "set datafile missing 'NaN'\n"
      "{}"
      "plot 'exceedance.dat' index 0 using 1:2 with points pt 7 ps 0.4 title 'measured', \\\n"
      "     '' index 1 using 1:2 with lines lw 2 title 'POT (generalised Pareto)', \\\n"
      "     '' index 1 using 1:3 with lines lw 2 dt 2 title 'block maxima (GEV/Gumbel)'\n",
      scenario, scenario, RangeLine(r));
}

ExceedancePlot WriteExceedancePlot(const std::string& dir, const std::string& scenario,
                                   const stats::EvtReport& report, const CommandRunner& runner,
                                   std::chrono::milliseconds timeout) {
  ExceedancePlot plot;
  plot.data = dir + "/exceedance.dat";
  plot.script = dir + "/exceedance.gp";
  if (Status s = CreateFolders(dir); !s) {
    plot.error = s.error().message;
    return plot;
  }
  Status a = WriteFileAtomic(plot.data, ExceedanceData(report));
  Status b = WriteFileAtomic(plot.script, ExceedanceScript(scenario, report));
  if (!a || !b) {
    plot.error = (!a ? a : b).error().message;
    return plot;
  }
  if (runner.Find("gnuplot").empty()) {
    plot.note = "gnuplot not found; not rendered (run `gnuplot exceedance.gp` there)";
    return plot;
  }
  // The script sets its own terminal and output. An SVG of an earlier run goes first, so
  // RunGnuplot's check that gnuplot made the image cannot pass on it.
  ::remove((dir + "/exceedance.svg").c_str());
  if (Status s = RunGnuplot(runner, dir, "load 'exceedance.gp'", "exceedance.svg", timeout); !s) {
    plot.note = s.error().message;
    plot.gnuplot_failed = true;
    return plot;
  }
  plot.rendered = dir + "/exceedance.svg";
  return plot;
}

nlohmann::json ExceedancePlotJson(const ExceedancePlot& plot, const std::string& scenario,
                                  std::vector<std::string>& notes) {
  nlohmann::json out = {{"data", plot.data}, {"script", plot.script}};
  if (!plot.error.empty()) {
    notes.push_back(plot.error);
    return out;
  }
  out["rendered"] = plot.rendered ? nlohmann::json(*plot.rendered) : nlohmann::json();
  if (!plot.rendered) out["note"] = plot.note;
  if (plot.gnuplot_failed) notes.push_back(fmt::format("{}: {}", scenario, plot.note));
  return out;
}

}  // namespace rtpulse::report
