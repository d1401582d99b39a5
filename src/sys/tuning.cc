#include "sys/tuning.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/parse.h"
#include "sys/boot_params.h"

namespace rtpulse::sys {
namespace {

constexpr const char* kCpuDir = "/sys/devices/system/cpu";
constexpr const char* kRtRuntimeFile = "/proc/sys/kernel/sched_rt_runtime_us";
constexpr const char* kIrqDir = "/proc/irq";
constexpr const char* kDefaultAffinityFile = "/proc/irq/default_smp_affinity";

/// A tuning to try: `change` names the file and the value for it. A note (nothing to try,
/// e.g. no cpufreq) goes into the record as it is, skipped.
struct Step {
  TuneChange change;
  bool note = false;
};

Step Set(std::string what, std::string path, std::string after) {
  Step step;
  step.change.what = std::move(what);
  step.change.path = std::move(path);
  step.change.after = std::move(after);
  return step;
}

Step Note(std::string what, std::string path, std::string detail) {
  Step step;
  step.change.what = std::move(what);
  step.change.path = std::move(path);
  step.change.detail = std::move(detail);
  step.note = true;
  return step;
}

std::string FirstLine(std::string_view text) {
  std::string line(text.substr(0, text.find('\n')));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

std::optional<int64_t> ReadNumber(const FsRoot& root, const std::string& path) {
  const auto line = root.ReadLine(path);
  if (!line) return std::nullopt;
  auto value = ParseSignedInt(*line, path);
  return value ? std::optional<int64_t>(*value) : std::nullopt;
}

std::vector<int> SortedCpus(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> OnlineCpus(const FsRoot& root, const TuneOptions& options) {
  if (!options.online_cpus.empty()) return SortedCpus(options.online_cpus);
  const auto line = root.ReadLine(std::string(kCpuDir) + "/online");
  if (!line) return {};
  auto cpus = ParseCpuList(*line);
  return cpus ? *cpus : std::vector<int>{};
}

/// A hex CPU mask as /proc/irq/default_smp_affinity takes it: 32-bit groups, comma-separated.
std::string HexMask(const std::vector<int>& cpus) {
  const int groups = cpus.empty() ? 1 : cpus.back() / 32 + 1;
  std::vector<uint32_t> words(static_cast<size_t>(groups), 0);
  for (int cpu : cpus) words[static_cast<size_t>(cpu / 32)] |= uint32_t{1} << (cpu % 32);
  std::string text = fmt::format("{:x}", words.back());
  for (size_t i = words.size() - 1; i-- > 0;) text += fmt::format(",{:08x}", words[i]);
  return text;
}

/// CPUs that share one cpufreq policy share its folder (on a Raspberry Pi 5 every
/// cpuN/cpufreq links to cpufreq/policy0): tuning it once tunes them all.
struct FreqDomain {
  std::string dir;
  std::vector<int> cpus;
};

std::vector<FreqDomain> FreqDomains(const FsRoot& root, const std::vector<int>& online) {
  std::vector<FreqDomain> domains;
  std::vector<std::string> keys;
  for (int cpu : online) {
    const std::string dir = fmt::format("{}/cpu{}/cpufreq", kCpuDir, cpu);
    if (!root.Exists(dir + "/scaling_governor")) continue;
    std::error_code ec;
    std::string key = std::filesystem::canonical(root.Path(dir), ec).string();
    if (ec) key = dir;
    const auto it = std::find(keys.begin(), keys.end(), key);
    if (it != keys.end()) {
      domains[static_cast<size_t>(it - keys.begin())].cpus.push_back(cpu);
      continue;
    }
    keys.push_back(std::move(key));
    domains.push_back({dir, {cpu}});
  }
  return domains;
}

void PlanFrequency(const FsRoot& root, const std::vector<int>& online, bool governor, bool minimum,
                   std::vector<Step>& steps) {
  const auto domains = FreqDomains(root, online);
  if (domains.empty()) {
    steps.push_back(Note("cpufreq", std::string(kCpuDir) + "/cpu*/cpufreq",
                         "no cpufreq: the CPUs run at a clock the kernel does not control "
                         "(fixed, firmware or hypervisor); nothing to tune"));
    return;
  }
  for (const auto& d : domains) {
    if (!governor) break;
    const std::string cpus = FormatCpuList(d.cpus);
    const auto available = root.ReadLine(d.dir + "/scaling_available_governors");
    if (available && (" " + *available + " ").find(" performance ") == std::string::npos) {
      steps.push_back(Note(fmt::format("cpufreq governor (CPUs {})", cpus),
                           d.dir + "/scaling_governor",
                           "no 'performance' governor (available: " + *available + ")"));
    } else {
      steps.push_back(Set(fmt::format("cpufreq governor (CPUs {})", cpus),
                          d.dir + "/scaling_governor", "performance"));
    }
  }
  for (const auto& d : domains) {
    if (!minimum) break;
    const std::string what = fmt::format("cpufreq minimum (CPUs {})", FormatCpuList(d.cpus));
    auto max_khz = ReadNumber(root, d.dir + "/scaling_max_freq");
    const auto hw_max_khz = ReadNumber(root, d.dir + "/cpuinfo_max_freq");
    if (!max_khz) {
      steps.push_back(Note(what, d.dir + "/scaling_min_freq", "scaling_max_freq unreadable"));
      continue;
    }
    // scaling_max_freq is the limit the admin (or thermal software) set: respect it.
    if (hw_max_khz) max_khz = std::min(*max_khz, *hw_max_khz);
    steps.push_back(Set(what, d.dir + "/scaling_min_freq", fmt::format("{}", *max_khz)));
  }
}

void PlanRtThrottling(const FsRoot& root, std::vector<Step>& steps) {
  if (!root.Exists(kRtRuntimeFile)) {
    steps.push_back(Note("RT throttling", kRtRuntimeFile, "file absent"));
    return;
  }
  steps.push_back(Set("RT throttling", kRtRuntimeFile, "-1"));
}

std::vector<std::string> IrqNumbers(const FsRoot& root) {
  std::vector<std::string> irqs;
  for (auto& name : root.List(kIrqDir)) {
    if (!name.empty() &&
        std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      irqs.push_back(std::move(name));
    }
  }
  std::sort(irqs.begin(), irqs.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return irqs;
}

void PlanIrqs(const FsRoot& root, const std::vector<int>& online, const std::vector<int>& measured,
              bool default_mask, bool devices, std::vector<Step>& steps) {
  const std::string all_irqs = std::string(kIrqDir) + "/*/smp_affinity_list";
  if (measured.empty()) {
    steps.push_back(Note("IRQ affinity", all_irqs, "no measured CPUs given: IRQs left alone"));
    return;
  }
  const auto house = CpusMinus(online, measured);
  if (house.empty()) {
    steps.push_back(Note("IRQ affinity", all_irqs,
                         fmt::format("every online CPU ({}) is measured: no housekeeping CPU "
                                     "to move IRQs to",
                                     FormatCpuList(online))));
    return;
  }
  if (const auto mask = default_mask ? root.ReadLine(kDefaultAffinityFile) : std::nullopt) {
    const auto cpus = ParseCpuMask(*mask);
    if (cpus && !CpusIntersect(*cpus, measured).empty()) {
      steps.push_back(Set("default IRQ affinity", kDefaultAffinityFile, HexMask(house)));
    } else if (cpus && !devices) {
      steps.push_back(
          Note("default IRQ affinity", kDefaultAffinityFile,
               fmt::format("already avoids CPUs {} ({})", FormatCpuList(measured), *mask)));
    }
  }
  if (!devices) return;
  std::vector<std::string> elsewhere;
  for (const auto& irq : IrqNumbers(root)) {
    const std::string path = fmt::format("{}/{}/smp_affinity_list", kIrqDir, irq);
    const auto line = root.ReadLine(path);
    if (!line) continue;
    const auto cpus = ParseCpuList(*line);
    if (cpus && CpusIntersect(*cpus, measured).empty()) {
      elsewhere.push_back(irq);
      continue;
    }
    steps.push_back(Set("IRQ " + irq + " affinity", path, FormatCpuList(house)));
  }
  if (!elsewhere.empty()) {
    std::string list;
    for (const auto& irq : elsewhere) list += (list.empty() ? "" : " ") + irq;
    steps.push_back(
        Note("IRQ affinity", all_irqs,
             fmt::format("IRQs {} already avoid CPUs {}", list, FormatCpuList(measured))));
  }
}

/// cpuidle's per-state switch: stateK/disable := 1 for every K deeper than `deepest` on each
/// measured CPU (cyclictest --deepest-idle-state, through the kernel's files instead of
/// libcpupower).
void PlanIdleStates(const FsRoot& root, const std::vector<int>& measured, int deepest,
                    std::vector<Step>& steps) {
  const std::string all = std::string(kCpuDir) + "/cpu*/cpuidle";
  if (measured.empty()) {
    steps.push_back(Note("idle states", all, "no measured CPUs given: idle states left alone"));
    return;
  }
  for (int cpu : measured) {
    const std::string dir = fmt::format("{}/cpu{}/cpuidle", kCpuDir, cpu);
    std::vector<int> states;
    for (const auto& name : root.List(dir)) {
      if (name.rfind("state", 0) != 0) continue;
      if (auto k = ParseInt(name.substr(5), name); k) states.push_back(static_cast<int>(*k));
    }
    std::sort(states.begin(), states.end());
    if (states.empty()) {
      steps.push_back(Note(fmt::format("idle states of CPU {}", cpu), dir,
                           "no cpuidle states (no idle driver, or a virtual machine): nothing "
                           "to limit"));
      continue;
    }
    for (int k : states) {
      if (k <= deepest) continue;
      const std::string state = fmt::format("{}/state{}", dir, k);
      const std::string name = FirstLine(root.Read(state + "/name").value_or("?"));
      steps.push_back(
          Set(fmt::format("idle state {} ({}) of CPU {}", k, name, cpu), state + "/disable", "1"));
    }
  }
}

/// Every tuning, in the order applied (restored in reverse).
std::vector<Step> Plan(const FsRoot& root, const TuneOptions& options,
                       const std::vector<int>& online) {
  std::vector<Step> steps;
  const auto on = [&](TuneKnob knob) { return !options.only || *options.only == knob; };
  if (on(TuneKnob::kGovernor) || on(TuneKnob::kMinFreq)) {
    PlanFrequency(root, online, on(TuneKnob::kGovernor), on(TuneKnob::kMinFreq), steps);
  }
  if (options.only ? *options.only == TuneKnob::kRtThrottling : options.rt_throttling_off) {
    PlanRtThrottling(root, steps);
  }
  if (on(TuneKnob::kDefaultIrqAffinity) || on(TuneKnob::kIrqAffinity)) {
    PlanIrqs(root, online, SortedCpus(options.measured_cpus), on(TuneKnob::kDefaultIrqAffinity),
             on(TuneKnob::kIrqAffinity), steps);
  }
  if (options.deepest_idle_state && on(TuneKnob::kIdleStates)) {
    PlanIdleStates(root, SortedCpus(options.measured_cpus), *options.deepest_idle_state, steps);
  }
  return steps;
}

std::string RefusalText(int error, const std::string& path) {
  std::string text = std::strerror(error);
  // The kernel answers EIO for per-CPU and managed IRQs; x86 answers EPERM for some MSI-X
  // queues (a virtio-blk request queue on a QEMU VM).
  if ((error == EIO || error == EPERM) && path.rfind(kIrqDir, 0) == 0) {
    text += " (a per-CPU or kernel-managed IRQ: the kernel keeps its affinity)";
  }
  return text;
}

nlohmann::json ChangeJson(const TuneChange& c) {
  nlohmann::json j = {{"what", c.what},
                      {"path", c.path},
                      {"before", c.before},
                      {"after", c.after},
                      {"status", std::string(TuneStatusName(c.status))}};
  if (!c.detail.empty()) j["detail"] = c.detail;
  if (c.status == TuneStatus::kApplied) j["restored"] = c.restored;
  if (!c.restore_error.empty()) j["restore_error"] = c.restore_error;
  return j;
}

Status WriteJournalFile(const std::string& path, const nlohmann::json& journal) {
  if (Status writable = CheckWritable(path); !writable) return writable;
  return WriteFileAtomic(path, journal.dump(2) + "\n");
}

}  // namespace

std::string_view TuneKnobName(TuneKnob knob) {
  switch (knob) {
    case TuneKnob::kGovernor:
      return "governor";
    case TuneKnob::kMinFreq:
      return "min-freq";
    case TuneKnob::kRtThrottling:
      return "rt-throttling";
    case TuneKnob::kDefaultIrqAffinity:
      return "default-irq-affinity";
    case TuneKnob::kIrqAffinity:
      return "irq-affinity";
    case TuneKnob::kIdleStates:
      return "idle-states";
  }
  return "governor";
}

std::string_view TuneStatusName(TuneStatus status) {
  switch (status) {
    case TuneStatus::kApplied:
      return "applied";
    case TuneStatus::kRefused:
      return "refused";
    case TuneStatus::kSkipped:
      return "skipped";
  }
  return "skipped";
}

Tuning::Tuning(FsRoot root, const TuneOptions& options, std::unique_ptr<TuneGuardian> guardian)
    : root_(std::move(root)),
      write_file_(options.write_file != nullptr ? options.write_file : &WriteKernelFile),
      journal_path_(options.journal_path),
      guardian_(std::move(guardian)),
      owner_pid_(::getpid()),
      marks_(!options.after_restore.empty()) {}

Expected<std::unique_ptr<Tuning>> Tuning::Apply(const FsRoot& root, const TuneOptions& options) {
  const auto online = OnlineCpus(root, options);
  const auto house = CpusMinus(online, SortedCpus(options.measured_cpus));
  KernelFileWriter writer = options.write_file != nullptr ? options.write_file : &WriteKernelFile;
  auto guardian = TuneGuardian::Start(writer, house, options.after_restore);
  if (!guardian) return guardian.error();
  std::unique_ptr<Tuning> tuning(new Tuning(root, options, std::move(*guardian)));
  if (!tuning->journal_path_.empty()) {
    const Status written =
        WriteJournalFile(tuning->journal_path_, {{"state", "applying"},
                                                 {"rtpulse_pid", tuning->owner_pid_},
                                                 {"guardian_pid", tuning->guardian_pid()},
                                                 {"changes", nlohmann::json::array()}});
    if (!written) {
      tuning->journal_path_.clear();
      return Error{written.error().code,
                   "tuning journal: " + written.error().message + "; nothing was tuned"};
    }
  }
  for (auto& step : Plan(root, options, online)) {
    if (step.note) {
      tuning->Add(std::move(step.change), "");
    } else {
      tuning->ApplyOne(std::move(step.change));
    }
  }
  tuning->WriteJournal("applied");
  return tuning;
}

void Tuning::Add(TuneChange change, std::string original) {
  changes_.push_back(std::move(change));
  originals_.push_back(std::move(original));
}

void Tuning::ApplyOne(TuneChange change) {
  auto original = root_.Read(change.path);
  if (!original) {
    change.detail = "cannot read " + change.path;
    return Add(std::move(change), "");
  }
  change.before = FirstLine(*original);
  if (change.before == change.after) {
    change.detail = "already " + change.after;
    return Add(std::move(change), std::move(*original));
  }
  // The guardian learns the original first: a death right after the write cannot lose it.
  const std::string full_path = root_.Path(change.path);
  if (Status kept = guardian_->Remember(full_path, *original); !kept) {
    change.detail = kept.error().message + "; left alone";
    return Add(std::move(change), std::move(*original));
  }
  if (const int error = write_file_(full_path.c_str(), change.after + "\n"); error != 0) {
    change.status = TuneStatus::kRefused;
    change.detail = RefusalText(error, change.path);
  } else {
    change.status = TuneStatus::kApplied;
  }
  Add(std::move(change), std::move(*original));
}

Tuning::~Tuning() {
  Release();
}

Status Tuning::Restore() {
  // A forked child (a load worker) shares this object's memory but must not undo the run.
  if (restored_ || ::getpid() != owner_pid_) return restore_status_;
  restored_ = true;
  std::vector<std::string> failed;
  // What the guardian reports for us should we die before Release() (TuneGuardian::Start).
  std::string report;
  for (size_t i = changes_.size(); i-- > 0;) {
    TuneChange& c = changes_[i];
    if (c.status != TuneStatus::kApplied) continue;
    const std::string full_path = root_.Path(c.path);
    const int error = write_file_(full_path.c_str(), originals_[i]);
    if (error != 0) {
      c.restore_error = std::strerror(error);
      failed.push_back(fmt::format("{} ({})", c.path, c.restore_error));
    } else {
      c.restored = true;
    }
    if (full_path.find('\n') == std::string::npos) {
      report += fmt::format("{}\t{}\n", error, full_path);
    }
  }
  if (marks_) {
    report = fmt::format("T\t{}\nB\trtpulse\n", ClockNs(CLOCK_REALTIME)) + report;
    if (Status handed = guardian_->Handover(report); !handed) {
      guardian_problem_ = handed.error().message;
      ReleaseGuardian();
    }
  } else {
    ReleaseGuardian();
  }
  if (!failed.empty()) {
    std::string list;
    for (const auto& f : failed) list += (list.empty() ? "" : ", ") + f;
    restore_status_ = Failure(fmt::format(
        "could not restore {} tuned file(s): {}; write their 'before' values back by hand",
        failed.size(), list));
  }
  WriteJournal(failed.empty() ? "restored" : "restore failed");
  return restore_status_;
}

void Tuning::ReleaseGuardian() {
  if (released_) return;
  released_ = true;
  if (Status finished = guardian_->Finish(); !finished && guardian_problem_.empty()) {
    guardian_problem_ = finished.error().message;
  }
}

void Tuning::Release() {
  if (::getpid() != owner_pid_) return;
  [[maybe_unused]] const Status restored = Restore();
  if (released_) return;
  ReleaseGuardian();
  WriteJournal(restore_status_ ? "restored" : "restore failed");
}

pid_t Tuning::guardian_pid() const {
  return released_ ? 0 : guardian_->pid();
}

nlohmann::json Tuning::ToJson() const {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : changes_) changes.push_back(ChangeJson(c));
  return changes;
}

std::string Tuning::Describe() const {
  size_t counts[3] = {0, 0, 0};
  for (const auto& c : changes_) ++counts[static_cast<size_t>(c.status)];
  std::string state = !restored_ ? "in force" : restore_status_ ? "restored" : "restore failed";
  std::string text = fmt::format("Tuning (--tune): {} applied, {} refused, {} skipped; {}\n",
                                 counts[0], counts[1], counts[2], state);
  for (const auto& c : changes_) {
    text += fmt::format("  {:<8} {}", TuneStatusName(c.status), c.what);
    if (!c.after.empty()) {
      text += fmt::format(": {} -> {} ({})", c.before.empty() ? "?" : c.before, c.after, c.path);
    }
    if (!c.detail.empty()) text += (c.after.empty() ? ": " : "; ") + c.detail;
    if (!c.restore_error.empty()) text += "; NOT RESTORED: " + c.restore_error;
    text += "\n";
  }
  if (!guardian_problem_.empty()) text += "  guardian: " + guardian_problem_ + "\n";
  return text;
}

void Tuning::WriteJournal(std::string_view state) const {
  if (journal_path_.empty()) return;
  nlohmann::json journal = {
      {"state", state},
      {"rtpulse_pid", owner_pid_},
      {"guardian_pid", guardian_pid()},
      {"note",
       "rtpulse writes every 'before' value back when the run ends; if rtpulse is killed, its "
       "guardian process (guardian_pid) does"},
      {"changes", ToJson()}};
  if (!guardian_problem_.empty()) journal["guardian_problem"] = guardian_problem_;
  // Best effort: the changes are in force (or restored) whatever happens to this file.
  [[maybe_unused]] const Status ignored = WriteJournalFile(journal_path_, journal);
}

Expected<std::unique_ptr<Tuning>> LimitIdleStates(const FsRoot& root, std::optional<int> deepest,
                                                  const std::vector<int>& online,
                                                  const std::vector<int>& measured) {
  if (!deepest) return std::unique_ptr<Tuning>();
  TuneOptions tune;
  tune.only = TuneKnob::kIdleStates;
  tune.deepest_idle_state = deepest;
  tune.online_cpus = online;
  tune.measured_cpus = measured;
  return Tuning::Apply(root, tune);
}

std::string RestoreIdleStates(Tuning& tuning, std::vector<std::string>& warnings) {
  const Status restored = tuning.Restore();
  tuning.Release();
  std::string disabled;
  for (const auto& c : tuning.changes()) {
    if (c.status == TuneStatus::kApplied) {
      disabled += (disabled.empty() ? "" : ", ") + c.what;
    } else if (c.status == TuneStatus::kRefused ||
               (c.status == TuneStatus::kSkipped && c.after.empty())) {
      warnings.push_back(fmt::format("--deepest-idle-state: {}: {}", c.what, c.detail));
    }
  }
  if (!restored) warnings.push_back("--deepest-idle-state: " + restored.error().message);
  if (disabled.empty()) return "none disabled";
  return fmt::format("disabled for the run, then {}: {}", restored ? "restored" : "NOT restored",
                     disabled);
}

}  // namespace rtpulse::sys
