#pragma once
// trace.json in the Chrome trace-event format (JSON object form), openable in the Perfetto UI
// (ui.perfetto.dev) and chrome://tracing.
//  - One process per section (Q source + NoC, each CUBE, each group's inter-CUBE links, host,
//    agents) and one thread (track) per component: a CUBE's process holds its Q buffer, its
//    PEs (each followed by the PE's DMA track) and its reducer.
//  - Every span is a complete event ("ph": "X", ts/dur in microseconds, the exact decimal of whole
//    nanoseconds that Perfetto reads back as those nanoseconds: trace_time.h) named after its
//    activity, with "cat" = its activity class and args {component, activity, phase, agent,
//    rows, bytes, start_ns, end_ns}.
//  - Each phase is an enclosing slice ("cat": "phase") on every track that has spans in it,
//    covering that track's first to last span of the phase, so the activities nest under it.
//  - Slices on one track always nest or are disjoint, as the format requires: when a
//    component's spans overlap without nesting (e.g. two processes charging one reducer), the
//    later ones move to an extra track "<component> #2", "#3", ...
//  - Given a power trace, a last process "chip power" with counter events ("ph": "C") at each
//    window's start: "power_w" {chip} and "power_by_class_w" {one value per energy class}, W,
//    and zeros at the end of the run.
#include <ostream>

#include "hw/common/base/json_reader.h"
#include "hw/common/observe/span_recorder.h"
#include "runtime/report/power.h"

namespace ahbm::report {

// Writes the document event by event as JSON text (no document tree held in memory), byte for
// byte what nlohmann::json::dump() gives for the same events.
void write_trace_json(std::ostream& os, const SpanRecorder& spans, const PowerTrace* power = nullptr);
// The events as an array (tests; parses what write_trace_json writes).
Json trace_events(const SpanRecorder& spans, const PowerTrace* power = nullptr);

}  // namespace ahbm::report
