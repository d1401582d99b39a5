#include "report/html_page.h"

#include <fmt/format.h>

#include <map>

#include "report/run_figures.h"
#include "report/units.h"
#include "stats/summary.h"

namespace rtpulse::report {
namespace {

constexpr const char* kStyle = R"(
body{font-family:sans-serif;margin:1.5em auto;max-width:1150px;color:#222;line-height:1.4}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right}
th{background:#f0f0f0}td.l,th.l{text-align:left}
.warn{color:#8a4b00}.bad{color:#b00000;font-weight:bold}
figure{margin:1em 0}figure svg{width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.9em;color:#444}.note{color:#555;font-style:italic}
)";

/// Records script errors into the page so a headless browser's --dump-dom shows them.
constexpr const char* kErrorProbe =
    "<script>window.addEventListener('error',function(e){var d=document.getElementById("
    "'rtpulse-errors');if(d){d.setAttribute('data-errors','1');d.textContent+='ERROR: '+e."
    "message+'\\n';}});</script>";

std::string E(const std::string& s) {
  return HtmlEscape(s);
}

std::string JsonText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

/// Per period beside the per-wake-up table: one entry per period, each skipped period late
/// from its deadline to the wake-up that ended the stall; "unknown" where the result does not
/// have the skipped periods' latencies (imports).
std::string PerPeriodTable(const std::vector<results::ScenarioStats>& rows) {
  std::string h =
      "<p>Per period: every period counts once, each skipped period with the lateness it had "
      "(its deadline to the wake-up that ended the stall); the table above is per wake-up "
      "(cyclictest).</p>\n<table id=\"summary-per-period\"><tr><th class=\"l\">Scenario</th>"
      "<th>Periods</th><th>Min</th><th>Mean</th><th>p50</th><th>p95</th><th>p99</th>"
      "<th>p99.9</th><th>p99.99</th><th>Max</th><th>Jitter</th></tr>\n";
  for (const auto& r : rows) {
    const std::string name = r.wake.empty() ? r.scenario : r.scenario + " (" + r.wake + ")";
    if (!r.per_period) {
      h += fmt::format(
          "<tr><td class=\"l\">{}</td><td class=\"l\" colspan=\"10\">unknown: the result "
          "does not give the skipped periods' latencies</td></tr>\n",
          E(name));
      continue;
    }
    const results::PerPeriodStats& p = *r.per_period;
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        E(name), p.periods, E(FormatUs(p.min_ns)), E(FormatUs(p.mean_ns)), E(FormatUs(p.median_ns)),
        E(FormatUs(p.p95_ns)), E(FormatUs(p.p99_ns)), E(FormatUs(p.p999_ns)),
        E(FormatUs(p.p9999_ns)), E(FormatUs(p.max_ns)), E(FormatUs(p.stddev_ns)));
  }
  return h + "</table>\n<p class=\"note\">Per-period percentiles: " +
         E(results::PerPeriodMethodStatement(rows)) + ".</p>\n";
}

std::string SummaryTable(const results::SuiteResult& suite) {
  std::string h =
      "<p>Per wake-up (cyclictest): one sample per wake-up.</p>\n<table id=\"summary\"><tr><th "
      "class=\"l\">Scenario</th><th class=\"l\">Status</th>"
      "<th>Samples</th><th>Min</th><th>Mean</th><th>p50</th><th>p95</th><th>p99</th>"
      "<th>p99.9</th><th>p99.99</th><th>Max</th><th>Jitter</th><th>Missed</th>"
      "<th>Skipped</th></tr>\n";
  std::string bound_notes;
  const std::vector<results::ScenarioStats> rows = results::SummarizeScenarios(suite);
  for (const auto& r : rows) {
    const std::string name = r.wake.empty() ? r.scenario : r.scenario + " (" + r.wake + ")";
    const char* missed_class = r.missed_activations > 0 ? " class=\"bad\"" : "";
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td{}>{}</td><td{}>{}</td></tr>\n",
        E(name), E(r.status), r.samples, E(results::WithBound(FormatUs(r.min_ns), r.bounds.min)),
        E(results::WithBound(FormatUs(r.mean_ns), r.bounds.mean)),
        E(results::WithBound(FormatUs(r.median_ns), r.bounds.Percentile(r.median_ns))),
        E(results::WithBound(FormatUs(r.p95_ns), r.bounds.Percentile(r.p95_ns))),
        E(results::WithBound(FormatUs(r.p99_ns), r.bounds.Percentile(r.p99_ns))),
        E(results::WithBound(FormatUs(r.p999_ns), r.bounds.Percentile(r.p999_ns))),
        E(results::WithBound(FormatUs(r.p9999_ns), r.bounds.Percentile(r.p9999_ns))),
        E(results::WithBound(FormatUs(r.max_ns), r.bounds.max)),
        E(results::WithBound(FormatUs(r.stddev_ns), r.bounds.stddev)), missed_class,
        r.misses_not_counted ? std::string("not counted")
                             : E(results::WithBound(std::to_string(r.missed_activations),
                                                    results::MissesBound(r.misses_unknown))),
        missed_class,
        r.misses_not_counted ? std::string("not counted") : std::to_string(r.skipped_periods));
    for (const auto& reason : r.bounds.reasons) {
      bound_notes += "<li>" + E(name) + ": " + E(reason) + "</li>";
    }
    if (r.latencies_not_printed > 0) {
      bound_notes += fmt::format(
          "<li>{}: {} more samples had a latency &lt;= 0 whose value the file does not give; "
          "not in this row</li>",
          E(name), r.latencies_not_printed);
    }
  }
  h += "</table>\n<p class=\"note\">Latencies in microseconds, all threads of a scenario "
       "together. Jitter = standard deviation. Missed = wake-ups after the next period's "
       "deadline (a control or e2e scenario: jobs or frames that ended after their deadline); "
       "skipped = periods lost because of them. Percentiles: " +
       E(results::MethodStatement(rows)) + ".</p>\n";
  if (!bound_notes.empty()) {
    h += "<p class=\"note\">\u2265 lower bound, \u2264 upper bound, ? unknown: the imported "
         "file does not give the exact value:</p><ul class=\"note\">" +
         bound_notes + "</ul>\n";
  }
  if (!rows.empty()) h += PerPeriodTable(rows);
  return h;
}

std::string FigureHtml(const HtmlFigure& f) {
  std::string h = fmt::format("<figure id=\"fig-{}\">\n", E(f.name));
  if (!f.svg.empty()) h += InlineSvg(f.svg, f.name + "-") + "\n";
  h += "<figcaption>" + E(f.caption);
  if (!f.files.empty()) {
    h += " Files:";
    for (const auto& file : f.files) h += fmt::format(" <a href=\"{0}\">{0}</a>", E(file));
  }
  return h + "</figcaption>\n</figure>\n";
}

std::string ListItems(const std::vector<std::string>& items, const char* cls) {
  std::string h = "<ul>\n";
  for (const auto& i : items) h += fmt::format("<li class=\"{}\">{}</li>\n", cls, E(i));
  return h + "</ul>\n";
}

/// Each distinct warning once, with the scope it applies to.
std::string WarningsList(const results::SuiteResult& suite) {
  const std::vector<DistinctWarning> warnings = DistinctWarnings(suite);
  if (warnings.empty()) return "<p>The run recorded no warnings.</p>\n";
  std::string h = "<ul id=\"warning-list\">\n";
  for (const auto& w : warnings) {
    h += fmt::format("<li class=\"warn\">{} <span class=\"note\">({})</span></li>\n", E(w.text),
                     E(WarningScope(w)));
  }
  return h + "</ul>\n";
}

std::string SystemTable(const nlohmann::json& system) {
  std::string h = "<table id=\"system\">\n";
  for (const auto& [key, value] : system.items()) {
    if (key == "checks") continue;  // the whole check report; summarised below
    h += fmt::format("<tr><th class=\"l\">{}</th><td class=\"l\">{}</td></tr>\n", E(key),
                     E(JsonText(value)));
  }
  return h + "</table>\n";
}

std::string LoadsTable(const nlohmann::json& loads) {
  if (!loads.is_array() || loads.empty()) return "<p>No loads (idle scenario).</p>\n";
  std::string h =
      "<table><tr><th class=\"l\">Load</th><th class=\"l\">Spec</th><th class=\"l\">CPUs</th>"
      "<th>Seconds</th><th>Achieved</th><th>MB/s</th><th>CPU busy %</th>"
      "<th class=\"l\">Warnings</th></tr>\n";
  for (const auto& l : loads) {
    std::string busy;
    if (l.contains("cpu_use") && l["cpu_use"].is_array()) {
      for (const auto& u : l["cpu_use"]) {
        busy += fmt::format("{}cpu{} {:.0f}", busy.empty() ? "" : ", ", u.value("cpu", -1),
                            u.value("busy_percent", 0.0));
      }
    }
    // A load that does not count its work (cmd) has no rate: shown as '-', not 0.
    const bool counted = l.contains("ops_per_second") && l["ops_per_second"].is_number();
    const std::string achieved = counted
                                     ? fmt::format("{:.4g} {}/s", l["ops_per_second"].get<double>(),
                                                   JsonText(l.value("ops_unit", nlohmann::json())))
                                     : "-";
    std::string warnings;
    if (l.contains("warnings") && l["warnings"].is_array()) {
      for (const auto& w : l["warnings"]) warnings += JsonText(w) + " ";
    }
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.1f}</td>"
        "<td>{}</td><td>{:.4g}</td><td>{}</td><td class=\"l warn\">{}</td></tr>\n",
        E(JsonText(l.value("load", nlohmann::json()))),
        E(JsonText(l.value("spec", nlohmann::json()))),
        E(JsonText(l.value("cpus", nlohmann::json()))), l.value("seconds", 0.0), E(achieved),
        l.value("mb_per_second", 0.0), E(busy), E(warnings));
  }
  return h + "</table>\n";
}

std::string ThreadTable(const results::LatencyRun& run) {
  std::string h =
      "<table><tr><th>Thread</th><th>CPU</th><th class=\"l\">Wake</th><th class=\"l\">Policy"
      "</th><th>Samples</th><th>Min</th><th>Mean</th><th>p99</th><th>Max</th><th>Missed</th>"
      "<th>Skipped</th><th>Dropped samples</th><th class=\"l\">Notes</th></tr>\n";
  for (const auto& path : run.paths) {
    for (const auto& p : path.probes) {
      const auto& hist = p.histogram;
      std::string notes;
      for (const auto& n : p.notes) notes += n + " ";
      if (p.degraded) notes = "degraded: " + notes;
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{} {}</td><td>{}</td>"
          "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td{}>{}</td><td>{}</td><td>{}</td>"
          "<td class=\"l warn\">{}</td></tr>\n",
          p.index, p.cpu, E(path.wake), E(p.policy), p.priority, hist.count(), FormatUs(hist.min()),
          FormatUs(hist.Mean()), FormatUs(hist.Percentile(99)), FormatUs(hist.max()),
          p.missed_activations > 0 ? " class=\"bad\"" : "",
          p.misses_not_counted ? std::string("not counted")
                               : E(results::WithBound(std::to_string(p.missed_activations),
                                                      results::MissesBound(p.misses_unknown))),
          p.misses_not_counted ? std::string("not counted") : std::to_string(p.skipped_periods),
          p.samples_dropped, E(notes));
    }
  }
  return h + "</table>\n";
}

std::string ScenarioSection(const results::ScenarioResult& s) {
  std::string h = fmt::format("<section id=\"scenario-{0}\"><h3>Scenario {0}</h3>\n", E(s.name));
  h += fmt::format("<p>{} Status: <b>{}</b>. Measured {:.1f} s planned, settle {:.1f} s.</p>\n",
                   E(s.description), E(results::ScenarioStatusName(s.status)),
                   static_cast<double>(s.planned_ns) / 1e9, static_cast<double>(s.settle_ns) / 1e9);
  if (!s.error.empty()) h += "<p class=\"bad\">Error: " + E(s.error) + "</p>\n";
  if (!s.load_specs.empty()) {
    std::string specs;
    for (const auto& spec : s.load_specs) specs += (specs.empty() ? "" : ", ") + spec;
    h += "<p>Loads asked for: " + E(specs) + "</p>\n";
  }
  h += "<h4>What the loads achieved</h4>\n" + LoadsTable(s.loads);
  if (s.latency) {
    h += "<h4>Threads</h4>\n" + ThreadTable(*s.latency);
  } else {
    h += "<p class=\"warn\">No latency measured.</p>\n";
  }
  if (!s.warnings.empty()) h += "<h4>Warnings</h4>\n" + ListItems(s.warnings, "warn");
  if (!s.samples_file.empty()) h += "<p>Per-sample log: " + E(s.samples_file) + "</p>\n";
  return h + "</section>\n";
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string InlineSvg(const std::string& svg, const std::string& prefix) {
  const size_t start = svg.find("<svg");
  std::string in = start == std::string::npos ? svg : svg.substr(start);
  std::string out;
  out.reserve(in.size() + 1024);
  const std::pair<const char*, const char*> kRefs[] = {{"id='", "id='"},
                                                       {"id=\"", "id=\""},
                                                       {"href='#", "href='#"},
                                                       {"href=\"#", "href=\"#"},
                                                       {"url(#", "url(#"}};
  for (size_t i = 0; i < in.size();) {
    bool replaced = false;
    for (const auto& [from, to] : kRefs) {
      const std::string f = from;
      // Only whole attribute names: "id=" must not be the tail of another name.
      if (in.compare(i, f.size(), f) == 0 && (f[0] != 'i' || i == 0 || in[i - 1] == ' ')) {
        out += to + prefix;
        i += f.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += in[i++];
  }
  return out;
}

std::vector<DistinctWarning> DistinctWarnings(const results::SuiteResult& suite) {
  std::vector<DistinctWarning> out;
  std::map<std::string, size_t> index;
  auto entry = [&](const std::string& text) -> DistinctWarning& {
    auto [it, added] = index.emplace(text, out.size());
    if (added) out.push_back({text, false, {}});
    return out[it->second];
  };
  for (const auto& w : suite.warnings) entry(w).whole_run = true;
  for (const auto& s : suite.scenarios) {
    std::vector<std::string> texts = s.warnings;
    if (s.latency)
      texts.insert(texts.end(), s.latency->warnings.begin(), s.latency->warnings.end());
    for (const auto& w : texts) {
      DistinctWarning& d = entry(w);
      if (d.scenarios.empty() || d.scenarios.back() != s.name) d.scenarios.push_back(s.name);
    }
  }
  return out;
}

std::string WarningScope(const DistinctWarning& warning) {
  std::string scope = warning.whole_run ? "whole run" : "";
  if (!warning.scenarios.empty()) {
    scope += scope.empty() ? "" : "; ";
    scope += warning.scenarios.size() == 1 ? "scenario " : "scenarios ";
    for (size_t i = 0; i < warning.scenarios.size(); ++i) {
      scope += (i == 0 ? "" : ", ") + warning.scenarios[i];
    }
  }
  return scope;
}

std::string RenderHtml(const results::SuiteResult& suite, const HtmlInputs& inputs) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>rtpulse report: " + E(KernelTitle(suite.system)) + "</title>\n";
  h += std::string(kErrorProbe) + "\n<style>" + kStyle + "</style></head>\n<body>\n";
  h += "<div id=\"rtpulse-errors\" data-errors=\"0\" hidden></div>\n";
  h += "<h1>rtpulse report</h1>\n";
  h += fmt::format(
      "<p>{} &middot; run status <b>{}</b> &middot; rtpulse {}<br><code>{}</code></p>\n",
      E(KernelTitle(suite.system)), E(suite.status), E(suite.rtpulse_version), E(suite.cmdline));
  // The first screen: how the run ended, the verdict, and every warning that bears on the
  // numbers, before any table.
  h += "<section id=\"first-screen\">\n";
  h += fmt::format("<p class=\"{}\">Run status: <b>{}</b>{}</p>\n",
                   suite.status == "complete" ? "ok" : "warn", E(suite.status),
                   suite.status_note.empty() ? "" : " &mdash; " + E(suite.status_note));
  h += inputs.first_screen;
  h += "<h2 id=\"warnings\">Warnings that bear on these numbers</h2>\n" + WarningsList(suite);
  h += "</section>\n";
  h += "<h2 id=\"summary-title\">Summary</h2>\n" + SummaryTable(suite);
  if (!inputs.tables.empty()) {
    h += "<p>LaTeX:";
    for (const auto& t : inputs.tables) h += fmt::format(" <a href=\"{0}\">{0}</a>", E(t));
    h += "</p>\n";
  }
  h += "<h2 id=\"figures\">Figures</h2>\n";
  for (const auto& f : inputs.figures) h += FigureHtml(f);
  if (!inputs.notes.empty())
    h += "<h3>Not drawn, or drawn with less</h3>\n" + ListItems(inputs.notes, "note");
  for (const auto& producer : inputs.extra_sections) {
    for (const auto& s : producer(suite)) {
      h += fmt::format("<section id=\"{}\"><h2>{}</h2>\n{}</section>\n", E(s.id), E(s.title),
                       s.html);
    }
  }
  h += "<h2 id=\"system-info\">System</h2>\n" + SystemTable(suite.system);
  h += "<h2 id=\"scenarios\">Scenarios</h2>\n";
  for (const auto& s : suite.scenarios) h += ScenarioSection(s);
  h += "</body></html>\n";
  return h;
}

}  // namespace rtpulse::report
