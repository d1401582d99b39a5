#pragma once

namespace rtpulse::cli {

/// Entry point of the `rtpulse` binary: parses the command line, runs one subcommand and
/// maps every error to its documented exit code.
int Main(int argc, char** argv);

}  // namespace rtpulse::cli
