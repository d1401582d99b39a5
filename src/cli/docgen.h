#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace rtpulse::cli {

/// What a man page header carries besides the command tree.
struct ManHeader {
  std::string version;  ///< "0.1.0"
  std::string date;     ///< "2026-12-01"
};

/// groff man(7) page for `command` (a subcommand of `root`, or `root` itself for rtpulse.1):
/// NAME, SYNOPSIS, DESCRIPTION, OPTIONS, COMMANDS (nested subcommands), EXIT STATUS,
/// ENVIRONMENT and SEE ALSO, all taken from the CLI11 definitions (descriptions, option names,
/// value types, footers). Hidden options (empty group) are left out, as --help does.
std::string RenderManPage(const CLI::App& root, const CLI::App& command, const ManHeader& header);

/// Bash completion script for `root`: commands, nested subcommands, every option, and file or
/// folder completion for options and positionals whose value is a path.
std::string RenderBashCompletion(const CLI::App& root);

/// Every generated file as (file name, contents): rtpulse.1, rtpulse-<command>.1 per
/// subcommand, and the completion script as "rtpulse.bash".
std::vector<std::pair<std::string, std::string>> GenerateDocs(const CLI::App& root,
                                                              const ManHeader& header);

}  // namespace rtpulse::cli
