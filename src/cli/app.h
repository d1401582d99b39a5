#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

namespace rtpulse::cli {

/// Entry point of the `rtpulse` binary: parses the command line, runs one subcommand and
/// maps every error to its documented exit code.
int Main(int argc, char** argv);

/// The whole command tree as `rtpulse` parses it: every subcommand of the command table with
/// its options, descriptions and footers. After a successful parse, `runner` holds what the
/// chosen subcommand runs (it must outlive the returned app). Main parses with it; the man
/// page and completion generator (cli/docgen.h) walks it, so the docs cannot drift.
std::unique_ptr<CLI::App> BuildApp(std::function<int()>& runner);

/// The exit-code footer every command starts with ("Exit codes: 0 ok, ...").
const char* ExitCodesText();

}  // namespace rtpulse::cli
