#pragma once
// Energy readings (hw/chip/energy.h) as JSON: summary.json "energy" (docs/outputs.md), the
// energy columns of the join and policy-evaluation tables.
#include <map>
#include <string>
#include <vector>

#include "hw/chip/energy.h"
#include "hw/common/base/json_reader.h"
#include "runtime/step/step_record.h"

namespace ahbm::report {

// {"total_j", "dynamic_j", "static_j", "by_class": {class: J}} and, with `components`,
// "by_component": {component: J}.
Json energy_json(const EnergyReading& e, bool components);

// A step's energy as the run counts it: its reading, plus static power for any of its time the
// reading does not cover (a host-side wait: static power alone). `chip` is the run's merged
// statistics tree (its routers and groups for static power).
EnergyReading step_energy(const StepRecord& s, const StatsNode& chip, const HwConfig& hw, DType t);

// summary.json "energy": the run's energy from its step records (each step's reading; a step
// with no simulated activity, e.g. a host-side wait, and timeline time outside every step cost
// static power) over `total_ns`: totals, by class and component, dynamic vs static, by phase,
// per token, average power, energy-delay product, and by operator for a whole model.
struct RunEnergy {
  EnergyReading run;  // every step and the time outside them
  double static_power_w = 0;  // the chip's (hw/chip/energy.h static_power_w, with the NoC's routers)
  double average_power_w = 0, edp_j_s = 0, outside_steps_ns = 0;
  std::map<std::string, EnergyReading> by_phase;
  uint64_t new_tokens = 0;  // every step's new tokens per agent
  double j_per_new_token = 0;
  uint64_t decode_tokens = 0;     // with decode steps (0: no decode phase, neither field written)
  double j_per_decode_token = 0;
  // A whole model: each operator's dynamic energy (its layer.<op> components) and the
  // attention's, the rest; empty otherwise.
  std::map<std::string, double> by_operator_dynamic_j;
};

// `chip` is the run's merged statistics tree (its routers and groups for static power);
// `step_joules` gets each step's total.
RunEnergy run_energy(const std::vector<StepRecord>& steps, const StatsNode& chip, const HwConfig& hw, DType t,
                     double total_ns, std::vector<double>* step_joules);
Json to_json(const RunEnergy& e);

}  // namespace ahbm::report
