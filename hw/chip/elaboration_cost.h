#pragma once
// What elaborating a chip costs the host, computed from the config before anything is built:
// SystemC processes (each a coroutine with a stack of its own), the memory mappings their stacks
// take (the stack and its guard page: 2 each, counted against vm.max_map_count), their virtual
// stack bytes (counted against RLIMIT_AS) and the resident bytes of the modules.
// runtime/run/preflight.h checks these against the machine's limits (docs/reliability.md).
#include <cstdint>

#include "hw/common/config/hw_config.h"

namespace ahbm {

struct ElaborationCost {
  uint64_t threads = 0;         // SC_THREAD and spawned processes
  uint64_t mappings = 0;        // memory mappings of their stacks
  uint64_t stack_bytes = 0;     // virtual bytes of their stacks
  uint64_t resident_bytes = 0;  // touched stack pages and module objects
};

// Processes per module, as the constructors create them: PE 2 (DMA, compute); CUBE 4 (serve,
// its responder, Q-buffer writer, reducer); group 3 (KV mover's two loops and its sender) plus
// one reduction node per CUBE; chip 4 (host, Q source, NoC up to 2).
ElaborationCost elaboration_cost(const HwConfig& cfg, int active_groups);

}  // namespace ahbm
