#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sys/check.h"

namespace rtpulse::sys {

/// Who was audited, for the report header.
struct CheckHeader {
  std::string hostname;
  std::string release;
  std::string version;
  std::string machine;
  std::string board;
  std::string hypervisor;
  std::string preemption_model;
  bool sysroot = false;  ///< System files came from $RTPULSE_SYSROOT, not this machine.
};

/// Counts per status.
struct CheckSummary {
  int pass = 0;
  int warn = 0;
  int fail = 0;
  int info = 0;
  int total() const { return pass + warn + fail + info; }
};

CheckSummary Summarise(const std::vector<sys::CheckResult>& results);

/// The human report: grouped by area, one line per check (wrapped at 100 columns), "why" and
/// "fix" under every warning, failure and info with a fix (`verbose`: under every check), then
/// one summary line. `color` adds ANSI colours to the status words and area names.
std::string FormatCheckText(const CheckHeader& header, const std::vector<sys::CheckResult>& results,
                            bool verbose, bool color);

/// The machine report as JSON, for embedding (result.json's system.checks); strings are not
/// yet checked for UTF-8 (dump with error_handler_t::replace).
nlohmann::json CheckJson(const CheckHeader& header, const ProcessFacts& process,
                         const std::vector<CheckResult>& results);

/// The machine report (docs/check.md, schema "rtpulse.check" version 1), ending in a newline.
std::string FormatCheckJson(const CheckHeader& header, const sys::ProcessFacts& process,
                            const std::vector<sys::CheckResult>& results);

}  // namespace rtpulse::sys
