// `rtpulse check`: pre-flight and tuning audit (docs/check.md).

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/command_runner.h"
#include "core/fs_root.h"
#include "core/terminal.h"
#include "sys/check.h"
#include "sys/check_report.h"
#include "sys/process_facts.h"

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

  if (json_to_stdout) {
    if (const int code = WriteStdout(sys::FormatCheckJson(header, *process, results)); code != 0) {
      return code;
    }
  } else {
    const bool color = ColorEnabled(STDOUT_FILENO);
    if (const int code = WriteStdout(sys::FormatCheckText(header, results, options.verbose, color));
        code != 0) {
      return code;
    }
  }
  if (json_to_file) {
    if (Status s = WriteFileAtomic(options.json, sys::FormatCheckJson(header, *process, results));
        !s) {
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
