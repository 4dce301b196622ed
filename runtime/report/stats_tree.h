#pragma once
// The one place a statistics tree (hw/common/observe/stats.h) becomes JSON: summary.json "stats" and
// "noc", stats.json "chip", "noc" and the per-component counters, noc-bench "noc_stats".
#include "hw/common/base/json_reader.h"
#include "hw/common/observe/stats.h"

namespace ahbm::report {

// An object per node: its counters by name, its object children by name (or, with an
// inline_prefix, their counters as prefix + name), its lists as arrays of their elements.
Json stats_json(const StatsNode& node);

// The declaration of every counter in the tree (stats.json "counter_docs"): an object keyed by
// the counter's path in stats_json(node), a list's elements written once as "[]"
// ("groups[].cubes[].pes[].macs", "noc.topology.cols"), each {"unit", "description", "merge"}.
Json stats_docs(const StatsNode& node);

}  // namespace ahbm::report
