#include "suite/facts.h"

#include "core/parse.h"

namespace rtpulse::suite {

void FillSystem(const sys::SystemInfo& info, results::LatencyRun& run) {
  run.sysname = info.sysname;
  run.nodename = info.nodename;
  run.release = info.release;
  run.version = info.version;
  run.machine = info.machine;
  run.preempt_rt = info.preempt_rt;
  run.preemption_model = info.preemption_model;
  run.hypervisor = info.hypervisor;
}

nlohmann::json SystemJson(const sys::SystemInfo& info) {
  return {{"sysname", info.sysname},
          {"nodename", info.nodename},
          {"release", info.release},
          {"version", info.version},
          {"machine", info.machine},
          {"preempt_rt", info.preempt_rt},
          {"preemption_model", info.preemption_model},
          {"preempt_dynamic_mode", info.preempt_dynamic_mode},
          {"preemption_evidence", info.preemption_evidence},
          {"online_cpus", FormatCpuList(info.online_cpus)},
          {"governors", info.governors},
          {"clocksource", info.clocksource},
          {"hypervisor", info.hypervisor},
          {"board", info.board},
          {"kernel_config", info.kernel_config ? "available" : info.kernel_config_problem}};
}

nlohmann::json LoadReportsJson(const std::vector<load::LoadReport>& reports) {
  nlohmann::json loads = nlohmann::json::array();
  for (const auto& r : reports) {
    nlohmann::json cpus = nlohmann::json::array();
    for (const auto& use : r.cpu_use) {
      cpus.push_back({{"cpu", use.cpu},
                      {"busy_percent", use.busy_percent},
                      {"softirq_percent", use.softirq_percent}});
    }
    loads.push_back({{"load", r.name},
                     {"spec", r.spec},
                     {"cpus", FormatCpuList(r.cpus)},
                     {"seconds", r.seconds},
                     {"ops", r.ops},
                     {"ops_unit", r.ops_unit},
                     {"ops_per_second", r.ops_per_second},
                     {"mb_per_second", r.mb_per_second},
                     {"cpu_use", cpus},
                     {"warnings", r.warnings}});
  }
  return loads;
}

}  // namespace rtpulse::suite
