#pragma once
// Reads a BookSim2 configuration file ("key = value;" statements, // and /* */ comments) and maps
// the keys this testbench models onto its options, so that an existing BookSim config runs
// unchanged on the booksim-iq router (docs/noc.md, "BookSim configuration files"). A key we do
// not model, or a value we model only partly (e.g. alloc_iters = 2), is an InputError naming the
// file and the key: nothing runs on a silently different network.
#include <string>
#include <vector>

#include "hw/bench/noc_bench.h"

namespace ahbm {

// `overrides` are "key=value" pairs applied after the file's statements (noc-bench --set).
NocBenchOptions parse_booksim_config(const std::string& text, const std::string& file,
                                     const std::vector<std::string>& overrides = {});
NocBenchOptions load_booksim_config(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace ahbm
