#pragma once
// noc-bench's JSON report of one load point (the CLI's --out, one element of a sweep).
#include "hw/common/base/json_reader.h"
#include "hw/bench/noc_bench.h"

namespace ahbm::report {

Json noc_bench_json(const NocBenchResult& result);

}  // namespace ahbm::report
