#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "load/load.h"

namespace rtpulse::load {

/// Parses load SPECs (docs/loads.md). Each argument holds one or more specs joined by `+`:
///   NAME[:key=value,...]             built-in loads, e.g. "cpu:cpus=0-1,intensity=50"
///   stress-ng[:[key=value ...] ARGS]  ARGS from the first word starting with '-' go to
///                                    stress-ng verbatim, e.g. "stress-ng:cpus=1 --cpu 2"
///   cmd:[key=value ...] PROGRAM ARGS  the user's program, split on blanks (no quoting;
///                                    shell=1 gives the rest to /bin/sh -c); it takes the
///                                    rest of its argument, '+' included
/// Every error is a usage error naming the bad value; CPUs must be online and allowed.
Expected<std::vector<LoadSpec>> ParseLoadSpecs(const std::vector<std::string>& args);

/// One spec (no `+`).
Expected<LoadSpec> ParseLoadSpec(std::string_view text);

/// The CPUs a spec may name, and the ones a spec without cpus= gets.
struct CpuScope {
  std::vector<int> online;
  std::vector<int> allowed;  ///< The process's affinity; empty: any online CPU.
};

/// This machine: its online CPUs (FsRoot::Live(): the loads run here) and this process's
/// affinity (what ParseLoadSpec(text) uses).
CpuScope LocalCpuScope();

/// As ParseLoadSpec(text), with placement checked against `scope` instead of this machine:
/// a suite file is checked against the CPUs it was written for.
Expected<LoadSpec> ParseLoadSpec(std::string_view text, const CpuScope& scope);

/// The cmd load from a program and its arguments given as a list (a suite file's
/// `command = [...]`: no splitting, no shell), with rtpulse's `key=value` options
/// ("cpus=1", "instances=2"). The spec's text shows it as `cmd:OPTIONS ARGV`.
Expected<LoadSpec> CommandLoadSpec(const std::vector<std::string>& argv,
                                   const std::vector<std::string>& options, const CpuScope& scope);

}  // namespace rtpulse::load
