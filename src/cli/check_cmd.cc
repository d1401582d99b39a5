// `rtpulse check`: pre-flight and tuning audit (docs/check.md).

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/command_runner.h"
#include "core/fs_root.h"
#include "core/terminal.h"
#include "sys/check.h"
#include "sys/check_report.h"
#include "sys/process_facts.h"
#include "trace/facilities.h"

namespace rtpulse::cli {
namespace {

struct CheckOptions {
  bool json_given = false;
  std::string json;  ///< "" or "-": stdout.
  bool strict = false;
  bool verbose = false;
};

Expected<sys::ProcessFacts> ProcessFacts() {
  const char* injected = std::getenv(sys::kProcessFactsEnv);
  if (injected == nullptr) return sys::ProbeProcess();
  return sys::ParseProcessFacts(injected);
}

sys::CheckHeader MakeHeader(const sys::CheckContext& context) {
  const auto& info = context.info;
  return {info.nodename, info.release,    info.version,          info.machine,
          info.board,    info.hypervisor, info.preemption_model, !context.root.root().empty()};
}

int WriteStdout(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    return ReportError(Failure("cannot write to standard output"));
  }
  return ToInt(ExitCode::kOk);
}

/// The "Tracing" section (docs/check.md#tracing): every facility of trace::DetectFacilities, the
/// ones --explain and --wake timerlat need, present or why not. Text lines wrapped like the
/// checks' (two-space indent, status column, continuation under the text).
std::string FormatTracingText(const std::vector<trace::Facility>& facilities) {
  constexpr size_t kWidth = 100;
  constexpr std::string_view kIndent = "        ";
  std::string out = "Tracing (--explain, --wake timerlat)\n";
  for (const auto& f : facilities) {
    std::string line = fmt::format("  {:<4}  {}: {}", f.present ? "yes" : "no", f.name, f.detail);
    std::string wrapped;
    while (line.size() > kWidth) {
      size_t cut = line.rfind(' ', kWidth);
      if (cut == std::string::npos || cut <= kIndent.size()) cut = kWidth;
      wrapped += line.substr(0, cut) + "\n";
      line = std::string(kIndent) + line.substr(line[cut] == ' ' ? cut + 1 : cut);
    }
    out += wrapped + line + "\n";
  }
  return out;
}

/// The check report's text with the Tracing section before its closing count line.
std::string WithTracingText(const std::string& report, const std::vector<trace::Facility>& f) {
  const size_t last = report.rfind("\n\n");
  if (last == std::string::npos) return report + "\n" + FormatTracingText(f);
  return report.substr(0, last + 2) + FormatTracingText(f) + report.substr(last + 1);
}

/// The check report's JSON with "tracing": [{name, present, detail}, ...] after "checks".
std::string WithTracingJson(const std::string& report, const std::vector<trace::Facility>& f) {
  auto doc = nlohmann::ordered_json::parse(report);
  auto list = nlohmann::ordered_json::array();
  for (const auto& facility : f) {
    list.push_back(
        {{"name", facility.name}, {"present", facility.present}, {"detail", facility.detail}});
  }
  doc["tracing"] = std::move(list);
  return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

int RunCheck(const CheckOptions& options) {
  const bool json_to_stdout = options.json_given && (options.json.empty() || options.json == "-");
  const bool json_to_file = options.json_given && !json_to_stdout;
  if (json_to_file) {
    if (Status s = CheckWritable(options.json); !s) return ReportError(s.error());
  }
  auto process = ProcessFacts();
  if (!process) return ReportError(process.error());

  const SystemCommandRunner commands;
  const sys::CheckContext context(FsRoot::System(), commands, *process);
  const auto results = sys::RunChecks(context);
  const sys::CheckHeader header = MakeHeader(context);
  // The privilege is the audited process's (RTPULSE_CHECK_PROCESS when given), like the
  // checks' own "This process" section. CAP_SYS_ADMIN is capability 21.
  const bool privileged = process->euid == 0 || process->HasCap(21);
  const std::vector<trace::Facility> tracing =
      trace::DetectFacilities(FsRoot::System(), "", privileged);
  const std::string json =
      WithTracingJson(sys::FormatCheckJson(header, *process, results), tracing);

  if (json_to_stdout) {
    if (const int code = WriteStdout(json); code != 0) {
      return code;
    }
  } else {
    const bool color = ColorEnabled(STDOUT_FILENO);
    if (const int code = WriteStdout(WithTracingText(
            sys::FormatCheckText(header, results, options.verbose, color), tracing));
        code != 0) {
      return code;
    }
  }
  if (json_to_file) {
    if (Status s = WriteFileAtomic(options.json, json); !s) {
      return ReportError(s.error());
    }
  }
  const bool failed = sys::Summarise(results).fail > 0;
  return ToInt(options.strict && failed ? ExitCode::kFailure : ExitCode::kOk);
}

}  // namespace

Runner SetupCheck(CLI::App& sub) {
  auto options = std::make_shared<CheckOptions>();
  sub.add_option("--json", options->json,
                 "write the report as JSON to FILE (atomically), or to stdout when no FILE is "
                 "given (then no text report)")
      ->expected(0, 1)
      ->type_name("[FILE]");
  sub.add_flag("--strict", options->strict, "exit 1 when any check fails (for scripts and CI)");
  sub.add_flag("-v,--verbose", options->verbose, "explain why every check matters, passes too");
  sub.footer(
      "Each check prints pass, warn, fail or info, what it found, why it matters for latency and "
      "the command or boot parameter that fixes it (docs/check.md).\n"
      "Exit codes: 0 done (also with failures, unless --strict), 1 a check failed with --strict "
      "or the report could not be written, 2 bad usage.\n"
      "Environment: RTPULSE_SYSROOT=DIR audits a copy of /proc and /sys under DIR; NO_COLOR "
      "turns colours off.");
  sub.allow_extras(false);
  CLI::App* app = &sub;
  return [options, app] {
    options->json_given = app->count("--json") > 0;
    return RunCheck(*options);
  };
}

}  // namespace rtpulse::cli
