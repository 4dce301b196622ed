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

Json run_energy_json(const std::vector<StepRecord>& steps, const StatsNode& chip, const HwConfig& hw, DType t,
                     double total_ns, std::vector<double>* step_joules) {
  EnergyReading run;
  std::map<std::string, EnergyReading> phases;
  uint64_t tokens = 0, decode_tokens = 0;
  for (const StepRecord& s : steps) {
    const EnergyReading e = step_energy(s, chip, hw, t);
    if (step_joules) step_joules->push_back(e.total_j());
    phases[s.id.phase] += e;
    run += e;
    uint64_t n = 0;
    for (int k : s.id.agent_tokens) n += uint64_t(k);
    tokens += n;
    if (s.id.phase == "decode") decode_tokens += n;
  }
  // Timeline time outside every step (none today): static power alone.
  const double outside_ns = total_ns > run.elapsed_ns ? total_ns - run.elapsed_ns : 0.0;
  if (outside_ns > 0) run += read_energy(chip, hw, t, outside_ns, 0.0);

  Json j = energy_json(run, true);
  const StatsNode* noc = chip.find(ChipStats::noc);
  const int routers = noc && noc->has(NocStats::routers) ? int(noc->get(NocStats::routers)) : 0;
  const double s = total_ns * 1e-9;
  j["static_power_w"] = static_power_w(hw, routers);
  j["average_power_w"] = s > 0 ? run.total_j() / s : 0.0;
  j["edp_j_s"] = run.total_j() * s;
  j["outside_steps_ns"] = outside_ns;
  Json by_phase = Json::object();
  for (const auto& [name, e] : phases) {
    Json p = energy_json(e, false);
    p["ns"] = e.elapsed_ns;
    by_phase[name] = p;
  }
  j["by_phase"] = by_phase;
  j["new_tokens"] = tokens;
  j["j_per_new_token"] = tokens ? run.total_j() / double(tokens) : 0.0;
  if (decode_tokens) {
    j["decode_tokens"] = decode_tokens;
    j["j_per_decode_token"] = phases.at("decode").total_j() / double(decode_tokens);
  }
  // A whole model: each operator's dynamic energy (components layer.<op>), the attention's the rest.
  Json ops = Json::object();
  double op_j = 0;
  for (const auto& [name, e] : run.by_component)
    if (name.rfind("layer.", 0) == 0) {
      ops[name.substr(6)] = e;
      op_j += e;
    }
  if (!ops.empty()) {
    ops["attention"] = run.dynamic_j() - op_j;
    j["by_operator_dynamic_j"] = ops;
  }
  j["note"] = "a reading of the simulated activity with the energy.* costs of the hardware config, plus static power "
              "over simulated time (docs/energy.md); new_tokens counts every step's new tokens per agent";
  return j;
}

}  // namespace ahbm::report
