#pragma once
// How much of the span record a run directory carries (`--trace LEVEL`, docs/outputs.md,
// "Output levels"). summary.json and stats.json are always computed from every span; the level
// only bounds latency.csv and trace.json, whose size grows with the tiles a run simulates.
//   tile     every span: each PE's per-tile DMA, GEMMs and softmax (what runs wrote before levels)
//   step     per-tile spans of each PE and PE DMA folded into one span per (component, step),
//            every other span kept: size grows with steps x components, not with tiles
//   phase    only the runtime's annotations: per-agent latencies and the steps (agent.*, runtime.*)
//   summary  no latency.csv and no trace.json
//   auto     tile up to kAutoTileSpans spans, step beyond (the default)
#include <cstddef>
#include <string>

#include "hw/common/observe/span_recorder.h"

namespace ahbm::report {

enum class TraceLevel { automatic, summary, phase, step, tile };

// Spans of a run beyond which `auto` writes the step level: ~250 bytes of trace.json and ~65 of
// latency.csv per span, so a tile-level run stays under ~80 MB. Every trace in traces/ is below
// it (the largest, decode_heavy, records ~57,000 spans).
inline constexpr size_t kAutoTileSpans = 250000;

// "auto", "summary", "phase", "step", "tile"; anything else throws InputError naming the value
// and the allowed names.
TraceLevel parse_trace_level(const std::string& name);
const char* trace_level_name(TraceLevel level);
// `auto` resolved for a run of `spans` spans; any other level as it is.
TraceLevel resolve_trace_level(TraceLevel level, size_t spans);

// The spans written at `level` (phase or step; tile is the recorder itself), with the same
// interned names and components. Step folding: a PE's (or PE DMA's) spans starting inside one
// runtime.step span become one span from the first start to the last end, rows and bytes
// summed, named after the activity when all share it and "pe_tiles" otherwise.
SpanRecorder spans_at_level(const SpanRecorder& spans, TraceLevel level);

}  // namespace ahbm::report
