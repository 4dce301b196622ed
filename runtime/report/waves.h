#pragma once
// waves.vcd plus what makes it pleasant in GTKWave:
//  - host signals derived after the simulation from the spans: host.phase (1-based phase index,
//    shown by name), host.q_load (a Q tile is being written), host.o_tiles_returned and
//    host.agents_done (counts);
//  - waves.gtkw, a GTKWave save file that opens waves.vcd with the signals grouped and ordered
//    (Q source + NoC; per CUBE: Q buffer, PE0..PE7 activity and DMA, reducer; inter-CUBE links;
//    host; chip power as analog traces), PE activity, host phase and (a whole model) host operator
//    shown as names through translate-filter files written next to it (pe_activity.gtkw-filter,
//    phases.gtkw-filter, operators.gtkw-filter), and the view zoomed to the whole run.
// All paths inside waves.gtkw are relative to the run directory: `cd RUN && gtkwave waves.gtkw`.
#include <string>
#include <vector>

#include "hw/common/observe/span_recorder.h"
#include "hw/common/observe/trace_sink.h"
#include "runtime/io/output_dir.h"
#include "runtime/report/power.h"

namespace ahbm::report {

struct VcdVar {
  std::string name;  // full dotted name as GTKWave shows it, e.g. "ahbm.group0.cube0.pe0.activity[2:0]"
  int width = 1;
  bool real = false;  // `$var real`: drawn as an analog waveform
};

// The variables declared in a VCD header, in declaration order.
std::vector<VcdVar> vcd_vars(const std::string& vcd_text);

// Names of the PE activity codes (hw/pe/pe.h PeActivity), indexed by code.
const std::vector<std::string>& pe_activity_names();

// Phase names in the order host.phase numbers them (by first start time): code = index + 1.
std::vector<std::string> phase_order(const SpanRecorder& spans);

// A whole model's operator track (runtime/step/model_steps.h): the spans of the layer
// operators ("runtime.layer.<op>", activity "layer<l>") and of the LM head ("runtime.lm_head",
// activity "head"). Operator names in the order host.operator numbers them (by first start
// time): code = index + 1, 0 between operators. Empty for an attention-only run.
std::vector<std::string> operator_order(const SpanRecorder& spans);

// A copy of `trace` with the host signals added; for a whole model also host.operator (the
// running operator's code) and host.layer (its layer; the LM head's is the layer count).
TraceSink with_host_signals(const TraceSink& trace, const SpanRecorder& spans, const std::vector<double>& tile_done_ns);

// Adds the power trace as real-valued signals: chip.power_w (the chip, W) and chip.power.<class>_w
// per energy class, each window's power from the window's start, 0 from the end of the run.
void add_power_signals(TraceSink& trace, const PowerTrace& power);

struct GtkwFiles {
  std::string gtkw, activity_filter, phase_filter;
  std::string operator_filter;  // empty without operators (no operators.gtkw-filter file)
};
// `vcd_text`: the VCD the save file opens (its variables are what the save file lists).
// `components`: the hardware's component table (SpanRecorder::components()), which places signals.
// `operators`: operator_order's names (host.operator shown by name when there are any).
GtkwFiles make_gtkw(const std::string& vcd_text, const std::vector<std::string>& phases, double total_ns,
                    const ComponentTable& components, const std::vector<std::string>& operators = {});

// Writes waves.vcd (with the host and, given `power`, the power signals), waves.gtkw and the
// filter files into `dir`.
void write_waves(OutputTarget& out, const TraceSink& trace, const SpanRecorder& spans,
                 const std::vector<double>& tile_done_ns, double total_ns, const PowerTrace* power = nullptr);

}  // namespace ahbm::report
