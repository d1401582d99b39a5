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
    nlohmann::json o = {{"load", r.name},
                        {"spec", r.spec},
                        {"cpus", FormatCpuList(r.cpus)},
                        {"seconds", r.seconds},
                        {"ops", r.ops},
                        {"ops_unit", r.ops_unit},
                        {"ops_per_second", r.ops_per_second},
                        {"mb_per_second", r.mb_per_second},
                        {"cpu_use", cpus},
                        {"warnings", r.warnings}};
    if (r.ops_unit.empty()) {  // The load does not count its work: unknown, not zero.
      o["ops"] = nullptr;
      o["ops_per_second"] = nullptr;
    }
    if (r.name == "cmd") {
      nlohmann::json processes = nlohmann::json::array();
      for (const auto& p : r.processes) {
        processes.push_back(
            {{"instance", p.instance},
             {"pid", p.pid},
             {"early", p.early},
             {"killed", p.killed},
             {"exit_status",
              p.exit_status >= 0 ? nlohmann::json(p.exit_status) : nlohmann::json(nullptr)},
             {"signal", p.signal != 0 ? nlohmann::json(p.signal) : nlohmann::json(nullptr)},
             {"seconds", p.seconds},
             {"status", p.Describe()}});
      }
      o["processes"] = processes;
      o["log"] = r.log_path;
    }
    loads.push_back(std::move(o));
  }
  return loads;
}

}  // namespace rtpulse::suite
