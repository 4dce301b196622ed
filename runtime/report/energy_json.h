#pragma once
// Energy readings (hw/chip/energy.h) as JSON: summary.json "energy" (docs/outputs.md), the
// energy columns of the join and policy-evaluation tables.
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
// `chip` is the run's merged statistics tree (its routers and groups for static power).
Json run_energy_json(const std::vector<StepRecord>& steps, const StatsNode& chip, const HwConfig& hw, DType t,
                     double total_ns, std::vector<double>* step_joules);

}  // namespace ahbm::report
