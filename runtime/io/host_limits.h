#pragma once
// What this machine and process allow a run to take, read before any large allocation or
// elaboration (runtime/run/preflight.h): memory (available memory, RLIMIT_DATA, the cgroup's
// memory.max), address space (RLIMIT_AS less what the process already maps) and memory
// mappings (vm.max_map_count less the mappings the process already has). Each limit carries
// where it comes from, so a refusal can name it.
#include <cstdint>
#include <optional>
#include <string>

namespace ahbm {

struct HostLimit {
  uint64_t value = 0;  // bytes, or mappings for HostLimits::mappings: what is still free
  std::string what;    // "MemAvailable in /proc/meminfo", "RLIMIT_AS (ulimit -v) of 292 MiB, 61 MiB in use", ...
};

struct HostLimits {
  std::optional<HostLimit> memory;         // resident bytes still free (the tightest source)
  std::optional<HostLimit> address_space;  // virtual bytes still free under RLIMIT_AS
  std::optional<HostLimit> mappings;       // memory mappings still free under vm.max_map_count
};

// Reads /proc/meminfo, /proc/self/status, /proc/self/maps, /proc/sys/vm/max_map_count, the
// cgroup v2 memory.max/memory.current of this process and its resource limits. A source that
// cannot be read (another OS, a restricted /proc) is left out: no limit from it.
HostLimits read_host_limits();

// "1234 MiB" (rounded up), for messages.
std::string mib(uint64_t bytes);

// OpenBLAS takes a 128 MiB buffer (BUFFER_SIZE of its x86-64 builds) on a thread's first
// product and, when that allocation fails, retries forever (a hang, not an error). Takes the
// calling thread's buffer now, while the limits were just checked to leave room for it: the
// buffer is kept and reused by every later product.
constexpr uint64_t kBlasBufferBytes = uint64_t(128) << 20;
void reserve_blas_buffer();

}  // namespace ahbm
