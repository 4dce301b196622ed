#pragma once
// The chip's power cap (hardware config `power_cap_w`, docs/energy.md "Power cap"). The rule is
// a chip-wide clock scale, as a power-capped chip picks its operating point: the PE clock
// (`clock_ghz`: GEMM engines, vector units, Q buffers, reducers) and the HBM and inter-CUBE link
// bandwidths (`pe.hbm.bandwidth_gbps`, `group.link.bandwidth_gbps`) are multiplied by one factor
// f <= 1. Energy per activity does not change, so each activity's power falls with its rate;
// static power does not. The run takes the highest f (within 1 %) whose power trace
// (runtime/report/power.h, the run's --power-window-ns windows) has no window above the cap:
// every f a run is accepted at was simulated and checked, so the cap holds by construction.
// With the cap at or above the uncapped peak the run is the uncapped run. Which parameters scale
// is the parameter table's `clock_scaled` (hw_config.h: at_clock_scale, min_clock_scale).
#include <functional>
#include <string>

#include "runtime/run/run_types.h"

namespace ahbm {

// `run_at(config, window_ns)` runs the scenario on a config with power windows of window_ns (0:
// the run's default); every run after the uncapped one uses the uncapped run's window, so the
// peaks compared are over the same windows. Returns the capped run (see above), its
// summary's power block with `cap` {cap_w, clock_scale, throttled_ns, uncapped_ns,
// uncapped_peak_w, runs} and `throttled_ns`, and its echoed config the given one. Throws
// InputError naming `hw_file` when the cap is below the static power (with the NoC's routers) or no clock scale
// meets it.
RunOutput run_power_capped(const HwConfig& hw, const std::string& hw_file,
                           const std::function<RunOutput(const HwConfig&, double)>& run_at, double window_ns);

}  // namespace ahbm
