#include "runtime/report/energy_json.h"

#include <map>

#include "hw/chip/chip_stats.h"

namespace ahbm::report {

Json energy_json(const EnergyReading& e, bool components) {
  Json by_class = Json::object();
  for (size_t c = 0; c < kEnergyClasses; ++c) by_class[energy_class_name(EnergyClass(c))] = e.by_class[c];
  Json j = {{"total_j", e.total_j()}, {"dynamic_j", e.dynamic_j()}, {"static_j", e.static_j()}, {"by_class", by_class}};
  if (components) j["by_component"] = e.by_component;
  return j;
}

EnergyReading step_energy(const StepRecord& s, const StatsNode& chip, const HwConfig& hw, DType t) {
  EnergyReading e = s.energy;
  if (s.timing.ns > e.elapsed_ns) e += read_energy(chip, hw, t, s.timing.ns - e.elapsed_ns, 0.0);
  return e;
}

RunEnergy run_energy(const std::vector<StepRecord>& steps, const StatsNode& chip, const HwConfig& hw, DType t,
                     double total_ns, std::vector<double>* step_joules) {
  RunEnergy out;
  EnergyReading& run = out.run;
  for (const StepRecord& s : steps) {
    const EnergyReading e = step_energy(s, chip, hw, t);
    if (step_joules) step_joules->push_back(e.total_j());
    out.by_phase[s.id.phase] += e;
    run += e;
    uint64_t n = 0;
    for (int k : s.id.agent_tokens) n += uint64_t(k);
    out.new_tokens += n;
    if (s.id.phase == "decode") out.decode_tokens += n;
  }
  // Timeline time outside every step (none today): static power alone.
  out.outside_steps_ns = total_ns > run.elapsed_ns ? total_ns - run.elapsed_ns : 0.0;
  if (out.outside_steps_ns > 0) run += read_energy(chip, hw, t, out.outside_steps_ns, 0.0);

  const StatsNode* noc = chip.find(ChipStats::noc);
  const int routers = noc && noc->has(NocStats::routers) ? int(noc->get(NocStats::routers)) : 0;
  const double s = total_ns * 1e-9;
  out.static_power_w = static_power_w(hw, routers);
  out.average_power_w = s > 0 ? run.total_j() / s : 0.0;
  out.edp_j_s = run.total_j() * s;
  out.j_per_new_token = out.new_tokens ? run.total_j() / double(out.new_tokens) : 0.0;
  if (out.decode_tokens) out.j_per_decode_token = out.by_phase.at("decode").total_j() / double(out.decode_tokens);
  double op_j = 0;
  for (const auto& [name, e] : run.by_component)
    if (name.rfind("layer.", 0) == 0) {
      out.by_operator_dynamic_j[name.substr(6)] = e;
      op_j += e;
    }
  if (!out.by_operator_dynamic_j.empty()) out.by_operator_dynamic_j["attention"] = run.dynamic_j() - op_j;
  return out;
}

Json to_json(const RunEnergy& e) {
  Json j = energy_json(e.run, true);
  j["static_power_w"] = e.static_power_w;
  j["average_power_w"] = e.average_power_w;
  j["edp_j_s"] = e.edp_j_s;
  j["outside_steps_ns"] = e.outside_steps_ns;
  Json by_phase = Json::object();
  for (const auto& [name, p] : e.by_phase) {
    by_phase[name] = energy_json(p, false);
    by_phase[name]["ns"] = p.elapsed_ns;
  }
  j["by_phase"] = by_phase;
  j["new_tokens"] = e.new_tokens;
  j["j_per_new_token"] = e.j_per_new_token;
  if (e.decode_tokens) {
    j["decode_tokens"] = e.decode_tokens;
    j["j_per_decode_token"] = e.j_per_decode_token;
  }
  if (!e.by_operator_dynamic_j.empty()) j["by_operator_dynamic_j"] = e.by_operator_dynamic_j;
  j["note"] = "a reading of the simulated activity with the energy.* costs of the hardware config, plus static power "
              "over simulated time (docs/energy.md); new_tokens counts every step's new tokens per agent";
  return j;
}

}  // namespace ahbm::report
