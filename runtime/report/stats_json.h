#pragma once
// stats.json: per-module counters of one run.
//  "components": per span-recorder component (PE, PE DMA, Q buffer, reducer, link, host, ...):
//     busy_ns (sum of its span durations, = summary.json busy_ns_by_component), busy_cycles
//     (busy_ns at the chip clock), occupied_ns (time covered by at least one span), utilisation
//     (occupied_ns / total_ns), bytes (sum of span bytes), spans, per-activity busy_ns/bytes/count,
//     and the module's own counters from the chip (PE MACs and HBM bytes, Q-buffer high-water
//     mark with its capacity and fill fraction, reducer rows merged, link busy time).
//  "noc": the NoC model's counters. "chip": the chip's statistics tree verbatim.
//  "counter_docs": unit, description and merge rule of every counter of "chip", by its path
//     there (report::stats_docs: "groups[].cubes[].pes[].macs"; "noc" is "chip"'s child of that
//     name, and a component's "counters" are those of its node in "chip").
#include <ostream>

#include "hw/common/base/json_reader.h"
#include "hw/common/observe/span_recorder.h"
#include "hw/common/observe/stats.h"

namespace ahbm::report {

// `chip` is the run's statistics tree (SimResult::stats); `hw` the resolved hardware config JSON.
// A tree node that names a span-recorder component (StatsNode::component) gives that
// component its "counters".
Json module_stats(const SpanRecorder& spans, const StatsNode& chip, const Json& hw, double total_ns);

}  // namespace ahbm::report
