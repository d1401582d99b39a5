#include "report/explain_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace rtpulse::report {
namespace {

/// ns as us with three decimals, exactly: 61000 -> "61.000", -1500 -> "-1.500".
std::string ExplainUs(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t mag = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03d}", negative ? "-" : "", mag / 1000, mag % 1000);
}

const results::ExplainResult* ScenarioExplain(const results::ScenarioResult& s) {
  if (!s.latency || !s.latency->explain) return nullptr;
  return &*s.latency->explain;
}

/// Indices of the worst spikes: by lateness, largest first, earlier explained first on ties.
std::vector<size_t> WorstSpikes(const results::ExplainResult& e) {
  std::vector<size_t> order(e.spikes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return e.spikes[a].latency_ns > e.spikes[b].latency_ns;
  });
  if (order.size() > kWorstSpikesShown) order.resize(kWorstSpikesShown);
  return order;
}

std::string ChainText(const results::SpikeExplanation& s) {
  return s.chain_thread.empty() ? s.chain : s.chain + " (" + s.chain_thread + ")";
}

std::string CountsText(const results::ExplainResult& e) {
  return fmt::format("threshold {} us: {} spikes, {} explained, {} not explained",
                     ExplainUs(e.threshold_ns), e.spikes_seen, e.spikes_explained,
                     e.spikes_not_explained);
}

std::string CostText(const results::ExplainCostResult& c) {
  return fmt::format(
      "cost of the trace: p50 {} us / p99 {} us without it ({} samples), p50 {} us / p99 {} us "
      "with it ({} samples)",
      ExplainUs(c.p50_without_ns), ExplainUs(c.p99_without_ns), c.samples_without,
      ExplainUs(c.p50_with_ns), ExplainUs(c.p99_with_ns), c.samples_with);
}

std::string UsCell(int64_t ns) {
  return fmt::format("<td class=\"num\" data-ns=\"{}\">{}</td>", ns, ExplainUs(ns));
}

std::string CauseTableHtml(const std::string& id, const std::string& caption,
                           const std::vector<results::ExplainCause>& causes) {
  if (causes.empty()) return "<p>" + HtmlEscape(caption) + ": none.</p>\n";
  std::string html = fmt::format(
      "<table id=\"{}\"><caption>{}</caption>\n<tr><th>kind</th><th>cause</th><th>total "
      "(us)</th><th>spikes</th><th>largest in one spike (us)</th></tr>\n",
      HtmlEscape(id), HtmlEscape(caption));
  for (const auto& c : causes) {
    html += fmt::format(
        "<tr class=\"cause\"><td>{}</td><td>{}</td>{}<td class=\"num\">{}</td>{}</tr>\n",
        HtmlEscape(c.kind), HtmlEscape(c.name), UsCell(c.total_ns), c.spikes, UsCell(c.max_ns));
  }
  return html + "</table>\n";
}

std::string WindowHref(const std::string& file, const std::string& run_prefix) {
  if (!file.empty() && file.front() == '/') return file;
  return run_prefix + file;
}

std::string WorstSpikesHtml(const std::string& id, const results::ExplainResult& e,
                            const std::string& run_prefix) {
  const auto worst = WorstSpikes(e);
  if (worst.empty()) return "<p>No spike was explained.</p>\n";
  std::string html = fmt::format(
      "<table id=\"{}\"><caption>The {} worst of {} explained spikes, by lateness</caption>\n"
      "<tr><th>thread</th><th>cpu</th><th>seq</th><th>late (us)</th><th>wake chain</th>"
      "<th>verdict</th><th>raw window</th></tr>\n",
      HtmlEscape(id), worst.size(), e.spikes.size());
  for (size_t i : worst) {
    const auto& s = e.spikes[i];
    std::string verdict = HtmlEscape(s.verdict);
    if (!s.complete) verdict += " <em>(incomplete: " + HtmlEscape(s.incomplete_reason) + ")</em>";
    const std::string window = s.window_file.empty()
                                   ? std::string("not saved")
                                   : fmt::format("<a href=\"{}\">{}</a>",
                                                 HtmlEscape(WindowHref(s.window_file, run_prefix)),
                                                 HtmlEscape(s.window_file));
    html += fmt::format(
        "<tr class=\"spike\"><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td>{}<td>{}</td><td class=\"verdict\">{}</td><td>{}</td></tr>\n",
        s.thread, s.cpu, s.seq, UsCell(s.latency_ns), HtmlEscape(ChainText(s)), verdict, window);
  }
  return html + "</table>\n";
}

std::string ScenarioHtml(const std::string& name, const results::ExplainResult& e,
                         const std::string& run_prefix) {
  const std::string id = "why-late-" + name;
  std::string html = fmt::format("<h3 id=\"{}\">{}</h3>\n", HtmlEscape(id), HtmlEscape(name));
  html += "<p class=\"explain-counts\">" + HtmlEscape(CountsText(e)) + "</p>\n";
  if (!e.active) {
    html += "<p class=\"explain-unavailable\">The kernel trace did not run: " +
            HtmlEscape(e.unavailable_reason) + " No spike was attributed.</p>\n";
  } else {
    html += CauseTableHtml(id + "-by-time", "Causes by total time", e.causes_by_time);
    html += CauseTableHtml(id + "-by-count", "Causes by number of spikes", e.causes_by_count);
    html += WorstSpikesHtml(id + "-spikes", e, run_prefix);
    if (e.cost) html += "<p>" + HtmlEscape(CostText(*e.cost)) + "</p>\n";
  }
  if (!e.notes.empty()) {
    html += "<ul class=\"explain-notes\">\n";
    for (const auto& n : e.notes) html += "<li>" + HtmlEscape(n) + "</li>\n";
    html += "</ul>\n";
  }
  return html;
}

std::string CauseTableText(const std::string& heading,
                           const std::vector<results::ExplainCause>& causes) {
  std::string out = heading + ":\n";
  if (causes.empty()) return out + "  none\n";
  out += fmt::format("  {:<12} {:>14} {:>7} {:>14}  {}\n", "kind", "total_us", "spikes", "max_us",
                     "cause");
  for (const auto& c : causes) {
    out += fmt::format("  {:<12} {:>14} {:>7} {:>14}  {}\n", c.kind, ExplainUs(c.total_ns),
                       c.spikes, ExplainUs(c.max_ns), c.name);
  }
  return out;
}

}  // namespace

bool HasExplain(const results::SuiteResult& suite) {
  return std::any_of(
      suite.scenarios.begin(), suite.scenarios.end(),
      [](const results::ScenarioResult& s) { return ScenarioExplain(s) != nullptr; });
}

HtmlSection ExplainHtmlSection(const results::SuiteResult& suite, const std::string& run_prefix) {
  std::string html =
      "<p>Each spike's lateness, from its deadline to its wake-up, attributed to what the "
      "kernel trace shows on its CPU (docs/explain.md). Unaccounted time is what the trace "
      "does not explain; on a VM it is most likely the host.</p>\n";
  for (const auto& s : suite.scenarios) {
    if (const auto* e = ScenarioExplain(s)) html += ScenarioHtml(s.name, *e, run_prefix);
  }
  return {"why-late", "Why was it late (--explain)", html};
}

std::string ExplainReportText(const results::SuiteResult& suite) {
  std::string out;
  for (const auto& s : suite.scenarios) {
    const auto* e = ScenarioExplain(s);
    if (e == nullptr) continue;
    out += fmt::format("Why was it late: {}\n", s.name);
    out += "  " + CountsText(*e) + "\n";
    if (!e->active) {
      out += "  the kernel trace did not run: " + e->unavailable_reason + "\n";
    } else {
      out += CauseTableText("causes by total time", e->causes_by_time);
      out += CauseTableText("causes by number of spikes", e->causes_by_count);
      const auto worst = WorstSpikes(*e);
      out += fmt::format("worst {} of {} explained spikes:\n", worst.size(), e->spikes.size());
      for (size_t i : worst) {
        const auto& sp = e->spikes[i];
        out += fmt::format("  T:{} cpu {} seq {} {} us ({}): {}{}\n", sp.thread, sp.cpu, sp.seq,
                           ExplainUs(sp.latency_ns), ChainText(sp), sp.verdict,
                           sp.complete ? "" : " (incomplete: " + sp.incomplete_reason + ")");
        out += "    window: " + (sp.window_file.empty() ? "not saved" : sp.window_file) + "\n";
      }
      if (e->cost) out += "  " + CostText(*e->cost) + "\n";
    }
    for (const auto& n : e->notes) out += "  note: " + n + "\n";
    out += "\n";
  }
  return out;
}

}  // namespace rtpulse::report
