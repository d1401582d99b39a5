#include "results/killed_run.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <sstream>

#include "core/atomic_file.h"
#include "core/fs_root.h"
#include "core/timestamp.h"

namespace rtpulse::results {
namespace {

constexpr int64_t kKilledNsPerSec = 1'000'000'000;
/// Beyond the checkpoint interval and the settle: a run this much later than its last
/// checkpoint is not writing any more.
constexpr int64_t kStaleMarginNs = 60 * kKilledNsPerSec;

/// "2026-01-02T03:04:05Z" as UTC ns; nullopt when malformed.
std::optional<int64_t> KilledParseIsoTime(const std::string& text) {
  tm utc{};
  char z = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d%c", &utc.tm_year, &utc.tm_mon, &utc.tm_mday,
                  &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &z) != 7 ||
      z != 'Z') {
    return std::nullopt;
  }
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&utc)) * kKilledNsPerSec;
}

std::string KilledBootId() {
  auto text = ReadWholeFile("/proc/sys/kernel/random/boot_id");
  if (!text) return "";
  while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) text->pop_back();
  return *text;
}

/// Field 22 of /proc/PID/stat (start time in clock ticks since boot); nullopt when no such
/// process. The command name (field 2) may hold spaces and ')': parse after the last ')'.
std::optional<uint64_t> KilledStartTicks(const std::string& stat_path) {
  auto text = ReadWholeFile(stat_path);
  if (!text) return std::nullopt;
  const size_t close = text->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text->substr(close + 1));
  std::string field;
  // After ')': field 3 (state) is the first; field 22 is the 20th.
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return std::nullopt;
  }
  uint64_t ticks = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), ticks);
  if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return ticks;
}

/// Whether the process `writer` records is alive; nullopt when the record cannot tell.
std::optional<bool> KilledWriterAlive(const nlohmann::json& writer, std::string* why) {
  if (!writer.is_object() || !writer.contains("pid") || !writer["pid"].is_number_integer()) {
    return std::nullopt;
  }
  const int64_t pid = writer["pid"].get<int64_t>();
  const std::string boot = writer.value("boot_id", std::string());
  if (pid <= 0) return std::nullopt;
  if (!boot.empty() && boot != KilledBootId()) {
    *why = fmt::format("the machine rebooted since process {} wrote it", pid);
    return false;
  }
  const auto ticks = KilledStartTicks(fmt::format("/proc/{}/stat", pid));
  if (!ticks) {
    *why = fmt::format("no process {} is alive", pid);
    return false;
  }
  if (writer.contains("start_ticks") && writer["start_ticks"].is_number_unsigned() &&
      writer["start_ticks"].get<uint64_t>() != *ticks) {
    *why = fmt::format("process {} is gone (the pid now belongs to another process)", pid);
    return false;
  }
  return true;
}

double KilledSeconds(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

struct KilledCounts {
  size_t restored = 0;
  size_t failed = 0;
};

/// Marks every applied, not yet restored record of `records` that `report` names.
void KilledMarkRecords(nlohmann::json& records, const GuardianReport& report,
                       const std::string& when, KilledCounts& counts) {
  if (!records.is_array()) return;
  for (auto& record : records) {
    if (!record.is_object() || record.value("status", std::string()) != "applied") continue;
    if (record.value("restored", false)) continue;
    const std::string path = record.value("path", std::string());
    if (path.empty()) continue;
    // The guardian's paths carry the FsRoot prefix; the records do not.
    const auto file = std::find_if(report.files.begin(), report.files.end(), [&](const auto& f) {
      return f.path.size() >= path.size() &&
             f.path.compare(f.path.size() - path.size(), path.size(), path) == 0;
    });
    if (file == report.files.end()) continue;
    if (file->error == 0) {
      record["restored"] = true;
      record["restored_by"] = report.restored_by;
      record["restored_time"] = when;
      ++counts.restored;
    } else {
      record["restore_error"] = std::strerror(file->error);
      ++counts.failed;
    }
  }
}

}  // namespace

std::vector<std::string> MarkKilledArgs(const std::string& result_path, pid_t pid) {
  return {"rtpulse", kMarkKilledCommand, result_path, std::to_string(pid)};
}

Expected<GuardianReport> ParseGuardianReport(std::string_view text) {
  GuardianReport report;
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      return UsageError(fmt::format("guardian report line {}: no tab", line_number));
    }
    const std::string_view head = line.substr(0, tab);
    const std::string_view rest = line.substr(tab + 1);
    if (head == "B") {
      if (rest != "guardian" && rest != "rtpulse") {
        return UsageError(fmt::format("guardian report line {}: bad restorer", line_number));
      }
      report.restored_by = std::string(rest);
      continue;
    }
    if (head == "T") {
      const auto [p, ec] =
          std::from_chars(rest.data(), rest.data() + rest.size(), report.restored_realtime_ns);
      if (ec != std::errc() || p != rest.data() + rest.size()) {
        return UsageError(fmt::format("guardian report line {}: bad time", line_number));
      }
      continue;
    }
    GuardianRestore file;
    const auto [p, ec] = std::from_chars(head.data(), head.data() + head.size(), file.error);
    if (ec != std::errc() || p != head.data() + head.size() || rest.empty()) {
      return UsageError(fmt::format("guardian report line {}: bad errno or path", line_number));
    }
    file.path = std::string(rest);
    report.files.push_back(std::move(file));
  }
  return report;
}

Expected<std::string> MarkKilled(const std::string& result_path, pid_t pid,
                                 const GuardianReport& report) {
  const auto text = ReadWholeFile(result_path);
  if (!text) return Failure(fmt::format("{}: cannot read it; not marked killed", result_path));
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Failure(fmt::format("{}: not JSON; not marked killed", result_path));
  }
  const std::string status = j.value("status", std::string());
  if (status != "running") {
    return fmt::format("{} says '{}' (the run ended itself): left alone", result_path, status);
  }
  const auto writer = j.find("writer");
  if (writer != j.end() && writer->is_object() && writer->value("pid", int64_t{0}) != pid) {
    return fmt::format("{} was written by process {}, not {}: left alone", result_path,
                       writer->value("pid", int64_t{0}), pid);
  }
  const std::string when = UtcIsoSeconds(report.restored_realtime_ns);
  KilledCounts counts;
  if (auto tuning = j.find("tuning"); tuning != j.end()) {
    KilledMarkRecords(*tuning, report, when, counts);
  }
  if (auto ab = j.find("tune_ab"); ab != j.end() && ab->is_object()) {
    if (auto knobs = ab->find("knobs"); knobs != ab->end() && knobs->is_array()) {
      for (auto& knob : *knobs) {
        if (!knob.is_object() || !knob.contains("blocks") || !knob["blocks"].is_array()) continue;
        for (auto& block : knob["blocks"]) {
          if (block.is_object() && block.contains("tuning")) {
            KilledMarkRecords(block["tuning"], report, when, counts);
          }
        }
      }
    }
  }
  const size_t restored = counts.restored;
  const size_t failed = counts.failed;
  j["status"] = "killed";
  j["updated_time"] = when;
  j["killed"] = {
      {"detected_by", "tuning guardian"},
      {"pid", pid},
      {"time", when},
      {"tuning_restored", restored},
      {"tuning_not_restored", failed},
      {"tuning_restored_by", report.restored_by},
      {"note", report.restored_by == "rtpulse"
                   ? "rtpulse restored its tunings itself, then ended before writing its "
                     "final result (SIGKILL, a crash, the OOM killer); the scenarios hold the "
                     "last checkpoint"
                   : "rtpulse ended without writing its final result (SIGKILL, a crash, the "
                     "OOM killer); the scenarios hold the last checkpoint"}};
  if (Status written = WriteFileAtomic(result_path, j.dump(1) + "\n"); !written) {
    return written.error();
  }
  return fmt::format("marked {} killed ({} tuned file(s) restored by {}, {} not)", result_path,
                     restored, report.restored_by, failed);
}

nlohmann::json CurrentWriter() {
  nlohmann::json writer = {{"pid", static_cast<int64_t>(::getpid())}, {"boot_id", KilledBootId()}};
  if (auto ticks = KilledStartTicks("/proc/self/stat")) writer["start_ticks"] = *ticks;
  return writer;
}

std::optional<std::string> StaleRunningNote(const nlohmann::json& result, int64_t now_ns) {
  if (!result.is_object() || result.value("status", std::string()) != "running") {
    return std::nullopt;
  }
  const std::string updated = result.value("updated_time", std::string());
  const auto updated_ns = KilledParseIsoTime(updated);
  const std::string last =
      updated_ns ? fmt::format("last checkpoint {}", updated) : "no checkpoint time";
  std::string why;
  if (const auto alive = KilledWriterAlive(result.value("writer", nlohmann::json()), &why)) {
    if (*alive) return std::nullopt;
    return fmt::format(
        "the run was killed (stale 'running': {}; {}); its scenarios hold that checkpoint", why,
        last);
  }
  // No writer record (an older rtpulse): judge by age.
  const nlohmann::json config = result.value("config", nlohmann::json::object());
  double settle_s = 0;
  if (auto scenarios = config.find("scenarios");
      scenarios != config.end() && scenarios->is_array()) {
    for (const auto& s : *scenarios) settle_s = std::max(settle_s, KilledSeconds(s, "settle_s"));
  }
  const double interval_s = KilledSeconds(config, "checkpoint_interval_s");
  const auto limit_ns =
      static_cast<int64_t>((std::max(interval_s, 10.0) + settle_s) * 1e9) + kStaleMarginNs;
  if (!updated_ns) {
    return std::string(
        "the run was killed or is unreadable (stale 'running': no writer process and no "
        "updated_time recorded)");
  }
  if (now_ns - *updated_ns <= limit_ns) return std::nullopt;
  return fmt::format(
      "the run was killed (stale 'running': {}, {:.0f} s ago, longer than the checkpoint "
      "interval and settle allow); its scenarios hold that checkpoint",
      last, static_cast<double>(now_ns - *updated_ns) / 1e9);
}

std::string KilledNote(const nlohmann::json& result) {
  if (!result.is_object() || result.value("status", std::string()) != "killed") return "";
  const nlohmann::json killed = result.value("killed", nlohmann::json::object());
  return fmt::format(
      "the run was killed (its tuning guardian marked it at {}, {} tuned file(s) restored{}); its "
      "scenarios hold the last checkpoint",
      killed.value("time", std::string("?")), killed.value("tuning_restored", 0),
      killed.value("tuning_restored_by", std::string()) == "rtpulse"
          ? " by rtpulse itself before it died"
          : "");
}

}  // namespace rtpulse::results
