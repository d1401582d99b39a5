#include "sys/check_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/version.h"

namespace rtpulse::sys {
namespace {

using sys::CheckResult;
using sys::CheckStatus;

constexpr size_t kWidth = 100;
constexpr int kSchemaVersion = 1;

/// Appends `text` word-wrapped to kWidth: the first line after `first`, the rest after
/// `indent` spaces. Words longer than a line stay whole.
void AppendWrapped(std::string& out, std::string_view first, size_t indent, std::string_view text,
                   size_t first_visible) {
  std::string line(first);
  size_t visible = first_visible;
  bool line_empty = true;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = text.find_first_not_of(' ', pos);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(text.find(' ', start), text.size());
    const auto word = text.substr(start, end - start);
    pos = end;
    if (!line_empty && visible + 1 + word.size() > kWidth) {
      out += line + "\n";
      line = std::string(indent, ' ');
      visible = indent;
      line_empty = true;
    }
    if (!line_empty) {
      line += ' ';
      ++visible;
    }
    line += word;
    visible += word.size();
    line_empty = false;
  }
  out += line + "\n";
}

const char* StatusColor(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass:
      return "\033[32m";
    case CheckStatus::kWarn:
      return "\033[33m";
    case CheckStatus::kFail:
      return "\033[1;31m";
    case CheckStatus::kInfo:
      return "\033[36m";
  }
  return "";
}

std::string HeaderLine(const CheckHeader& h) {
  std::string line =
      fmt::format("rtpulse check: {}, Linux {} {}", h.hostname, h.release, h.machine);
  if (!h.board.empty()) line += ", " + h.board;
  if (!h.hypervisor.empty()) line += ", virtual machine: " + h.hypervisor;
  return line;
}

}  // namespace

CheckSummary Summarise(const std::vector<CheckResult>& results) {
  CheckSummary s;
  for (const auto& r : results) {
    switch (r.status) {
      case CheckStatus::kPass:
        ++s.pass;
        break;
      case CheckStatus::kWarn:
        ++s.warn;
        break;
      case CheckStatus::kFail:
        ++s.fail;
        break;
      case CheckStatus::kInfo:
        ++s.info;
        break;
    }
  }
  return s;
}

std::string FormatCheckText(const CheckHeader& header, const std::vector<CheckResult>& results,
                            bool verbose, bool color) {
  const std::string bold = color ? "\033[1m" : "";
  const std::string reset = color ? "\033[0m" : "";
  std::string out = HeaderLine(header) + "\n";
  if (header.sysroot) out += "(system files read from $RTPULSE_SYSROOT, not from this machine)\n";
  std::string area;
  for (const auto& r : results) {
    if (r.area != area) {
      area = r.area;
      out += fmt::format("\n{}{}{}\n", bold, sys::AreaTitle(area), reset);
    }
    const std::string status(sys::StatusName(r.status));
    const std::string lead =
        fmt::format("  {}{}{}  ", color ? StatusColor(r.status) : "", status, color ? reset : "");
    AppendWrapped(out, lead, 8, fmt::format("{}: {}", r.title, r.found), 8);
    // Warnings and failures always explain themselves; info only when there is something to
    // do about it; passes only on request.
    const bool actionable = r.status == CheckStatus::kWarn || r.status == CheckStatus::kFail ||
                            (r.status == CheckStatus::kInfo && !r.fix.empty());
    if (verbose || actionable) {
      AppendWrapped(out, "        why: ", 13, r.why, 13);
      if (!r.fix.empty()) AppendWrapped(out, "        fix: ", 13, r.fix, 13);
    }
  }
  const CheckSummary s = Summarise(results);
  out += fmt::format("\n{}{} checks: {} pass, {} warn, {} fail, {} info{}\n", bold, s.total(),
                     s.pass, s.warn, s.fail, s.info, reset);
  return out;
}

namespace {

/// The check report as either JSON flavour: ordered for `rtpulse check --json` (the documented
/// field order), plain for embedding in result.json.
template <typename Json>
Json BuildCheckJson(const CheckHeader& header, const sys::ProcessFacts& process,
                    const std::vector<CheckResult>& results) {
  const auto limit = [](const std::optional<uint64_t>& v) { return v ? Json(*v) : Json(nullptr); };
  Json doc;
  doc["schema"] = "rtpulse.check";
  doc["schema_version"] = kSchemaVersion;
  doc["rtpulse_version"] = kVersion;
  doc["system"] = {{"hostname", header.hostname},
                   {"kernel_release", header.release},
                   {"kernel_version", header.version},
                   {"machine", header.machine},
                   {"board", header.board},
                   {"hypervisor", header.hypervisor},
                   {"preemption_model", header.preemption_model},
                   {"from_sysroot", header.sysroot}};
  doc["process"] = {{"euid", process.euid},
                    {"cap_effective", fmt::format("0x{:x}", process.cap_effective)},
                    {"memlock_soft_bytes", limit(process.memlock_soft_bytes)},
                    {"memlock_hard_bytes", limit(process.memlock_hard_bytes)},
                    {"rtprio_soft", limit(process.rtprio_soft)},
                    {"rtprio_hard", limit(process.rtprio_hard)},
                    {"injected", process.injected}};
  const CheckSummary s = Summarise(results);
  doc["summary"] = {
      {"total", s.total()}, {"pass", s.pass}, {"warn", s.warn}, {"fail", s.fail}, {"info", s.info}};
  Json checks = Json::array();
  for (const auto& r : results) {
    checks.push_back({{"id", r.id},
                      {"area", r.area},
                      {"title", r.title},
                      {"status", std::string(sys::StatusName(r.status))},
                      {"found", r.found},
                      {"why", r.why},
                      {"fix", r.fix},
                      {"scope", r.process_scope ? "process" : "system"}});
  }
  doc["checks"] = std::move(checks);
  return doc;
}

}  // namespace

nlohmann::json CheckJson(const CheckHeader& header, const ProcessFacts& process,
                         const std::vector<CheckResult>& results) {
  return BuildCheckJson<nlohmann::json>(header, process, results);
}

std::string FormatCheckJson(const CheckHeader& header, const ProcessFacts& process,
                            const std::vector<CheckResult>& results) {
  // Text from files and tools may not be UTF-8: replace bad bytes rather than throw.
  return BuildCheckJson<nlohmann::ordered_json>(header, process, results)
             .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace rtpulse::sys
