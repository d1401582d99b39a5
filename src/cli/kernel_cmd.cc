// `rtpulse kernel verify|fragment`: is this kernel configured for real time?
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/fs_root.h"
#include "core/kernel_config.h"
#include "kernel/running_config.h"
#include "kernel/verify.h"

namespace rtpulse::cli {
namespace {

struct VerifyOptions {
  std::string config_path;
  bool running = false;
  std::vector<std::string> fragment_paths;
  bool json = false;
  bool quiet = false;
};

/// What the report header says about the config it checked.
struct Subject {
  KernelConfig config;
  std::string description;
  std::string uname_version;  ///< Only for --running.
};

Expected<std::string> ReadFile(const std::string& path, std::string_view what) {
  auto text = FsRoot().Read(path);
  if (!text) return UsageError(fmt::format("cannot read {} '{}': check the path", what, path));
  return std::move(*text);
}

/// The fragments to check, merged in order (a later file overrides an earlier one, as
/// merge_config.sh does). None given: the fragment compiled into rtpulse.
Expected<KernelConfig> LoadFragments(const std::vector<std::string>& paths) {
  if (paths.empty()) {
    return KernelConfig::Parse(kernel::DefaultFragment(), "built-in kernel/rt.config", true);
  }
  std::string merged;
  for (const auto& path : paths) {
    auto text = ReadFile(path, "fragment");
    if (!text) return text.error();
    // Each file on its own must be consistent; across files the last one wins.
    if (auto one = KernelConfig::Parse(*text, path, true); !one) return one.error();
    merged += *text;
    merged += '\n';
  }
  auto fragment = KernelConfig::Parse(merged, fmt::format("{}", fmt::join(paths, "+")));
  if (fragment && fragment->entries().empty()) {
    return UsageError(fmt::format("fragment {} asks for no option", fmt::join(paths, ", ")));
  }
  return fragment;
}

Expected<Subject> LoadSubject(const VerifyOptions& opts) {
  if (opts.running) {
    auto running = kernel::LoadRunningConfig(FsRoot::System());
    if (!running) return running.error();
    return Subject{std::move(running->config),
                   fmt::format("{} of the running kernel {}", running->source, running->release),
                   running->version};
  }
  auto text = ReadFile(opts.config_path, "config");
  if (!text) return text.error();
  auto config = KernelConfig::Parse(*text, opts.config_path);
  if (!config) return config.error();
  if (config->entries().empty()) {
    return UsageError(
        fmt::format("'{}' holds no CONFIG_ line: is it a kernel .config?", opts.config_path));
  }
  return Subject{std::move(*config), opts.config_path, ""};
}

std::string Wanted(const kernel::OptionCheck& c) {
  return fmt::format("CONFIG_{}={}", c.name, c.wanted);
}

std::string Actual(const kernel::OptionCheck& c) {
  if (!c.actual) return "absent";
  if (*c.actual == "n") return "is not set";
  return "=" + *c.actual;
}

void PrintText(const Subject& subject, const kernel::VerifyReport& report, bool quiet) {
  fmt::print("kernel verify: {}", subject.description);
  if (!subject.config.version().empty()) {
    fmt::print(" (Linux {} {})", subject.config.version(), subject.config.arch());
  }
  fmt::print("\n");
  for (const auto& c : report.checks) {
    if (quiet && c.state == kernel::OptionState::kSet) continue;
    fmt::print("  {:<8} {}", kernel::StateName(c.state), Wanted(c));
    if (c.state != kernel::OptionState::kSet) fmt::print("  (config: {})", Actual(c));
    fmt::print("\n");
    if (!c.reason.empty()) fmt::print("           why: {}\n", c.reason);
  }
  for (const auto& p : report.problems) fmt::print("  problem  {}\n", p);
  fmt::print("{}: {} of {} requested options set, {} dropped, {} missing{}\n",
             report.ok() ? "PASS" : "FAIL", report.Count(kernel::OptionState::kSet),
             report.checks.size(), report.Count(kernel::OptionState::kDropped),
             report.Count(kernel::OptionState::kMissing),
             report.problems.empty() ? "" : fmt::format(", {} other", report.problems.size()));
}

void PrintJson(const Subject& subject, const kernel::VerifyReport& report) {
  nlohmann::json out;
  out["config"] = subject.description;
  out["kernel_version"] = subject.config.version();
  out["arch"] = subject.config.arch();
  if (!subject.uname_version.empty()) out["uname_version"] = subject.uname_version;
  out["ok"] = report.ok();
  auto& options = out["options"] = nlohmann::json::array();
  for (const auto& c : report.checks) {
    nlohmann::json o{{"name", c.name}, {"wanted", c.wanted}, {"state", kernel::StateName(c.state)}};
    o["actual"] = c.actual ? nlohmann::json(*c.actual) : nlohmann::json(nullptr);
    if (!c.reason.empty()) o["reason"] = c.reason;
    options.push_back(std::move(o));
  }
  out["problems"] = report.problems;
  fmt::print("{}\n", out.dump(2));
}

int RunVerify(const VerifyOptions& opts) {
  if (opts.running == !opts.config_path.empty()) {
    return ReportError(UsageError("kernel verify: give exactly one of --config FILE or --running"));
  }
  auto fragment = LoadFragments(opts.fragment_paths);
  if (!fragment) return ReportError(fragment.error());
  auto subject = LoadSubject(opts);
  if (!subject) return ReportError(subject.error());
  auto report = kernel::Verify(*fragment, subject->config);
  if (opts.running) {
    kernel::CheckRunningVersion(*fragment, subject->config, subject->uname_version, report);
  }
  if (opts.json) {
    PrintJson(*subject, report);
  } else {
    PrintText(*subject, report, opts.quiet);
  }
  return ToInt(report.ok() ? ExitCode::kOk : ExitCode::kFailure);
}

}  // namespace

Runner SetupKernel(CLI::App& sub) {
  sub.require_subcommand(1);
  auto chosen = std::make_shared<Runner>();

  auto opts = std::make_shared<VerifyOptions>();
  CLI::App* verify = sub.add_subcommand(
      "verify", "check a kernel config against the RT fragment: each option set/dropped/missing");
  auto* config = verify->add_option("--config", opts->config_path, "a kernel .config to check")
                     ->check(CLI::ExistingFile);
  auto* running =
      verify->add_flag("--running", opts->running,
                       "check the running kernel (/proc/config.gz, else /boot/config-$(uname -r))");
  config->excludes(running);
  verify
      ->add_option("--fragment", opts->fragment_paths,
                   "fragment(s) to check against, merged in order (default: the built-in "
                   "kernel/rt.config)")
      ->check(CLI::ExistingFile);
  verify->add_flag("--json", opts->json, "print the report as JSON");
  verify->add_flag("-q,--quiet", opts->quiet, "list only options that are not set");
  verify->footer(
      "Exit codes: 0 every requested option is set, 1 something is dropped or missing,\n"
      "            2 bad usage or unreadable file, 3 no config found for the running kernel.");
  verify->callback([chosen, opts] { *chosen = [opts] { return RunVerify(*opts); }; });

  CLI::App* fragment =
      sub.add_subcommand("fragment", "print the built-in RT config fragment (kernel/rt.config)");
  fragment->callback([chosen] {
    *chosen = [] {
      fmt::print("{}", kernel::DefaultFragment());
      return 0;
    };
  });

  return
      [chosen] { return (*chosen) ? (*chosen)() : ReportError(UsageError("kernel: no action")); };
}

}  // namespace rtpulse::cli
