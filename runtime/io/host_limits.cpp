#include "runtime/io/host_limits.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include <cblas.h>

namespace ahbm {

namespace {

// "Key:   123 kB" from a /proc file of that form, in bytes.
std::optional<uint64_t> proc_kb(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, key.size() + 1, key + ":") == 0) {
      std::istringstream s(line.substr(key.size() + 1));
      uint64_t kb = 0;
      if (s >> kb) return kb << 10;
    }
  return std::nullopt;
}

std::optional<uint64_t> read_number(const std::string& file) {
  std::ifstream in(file);
  uint64_t v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

// The cgroup v2 directory of this process ("0::/path" in /proc/self/cgroup).
std::optional<std::string> cgroup_dir() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, 3, "0::") == 0) return "/sys/fs/cgroup" + line.substr(3);
  return std::nullopt;
}

void tighten(std::optional<HostLimit>& limit, uint64_t value, std::string what) {
  if (!limit || value < limit->value) limit = HostLimit{value, std::move(what)};
}

uint64_t headroom(uint64_t limit, uint64_t used) { return limit > used ? limit - used : 0; }

std::string limit_text(const char* name, uint64_t limit, uint64_t used) {
  return std::string(name) + " of " + mib(limit) + ", " + mib(used) + " in use";
}

}  // namespace

std::string mib(uint64_t bytes) { return std::to_string((bytes + (uint64_t(1) << 20) - 1) >> 20) + " MiB"; }

HostLimits read_host_limits() {
  HostLimits h;
  if (const auto avail = proc_kb("/proc/meminfo", "MemAvailable"))
    tighten(h.memory, *avail, "available memory (MemAvailable in /proc/meminfo) of " + mib(*avail));
  const uint64_t vm_size = proc_kb("/proc/self/status", "VmSize").value_or(0);
  const uint64_t vm_data = proc_kb("/proc/self/status", "VmData").value_or(0);
  const uint64_t vm_rss = proc_kb("/proc/self/status", "VmRSS").value_or(0);
  rlimit r{};
  if (getrlimit(RLIMIT_DATA, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
    tighten(h.memory, headroom(r.rlim_cur, vm_data), limit_text("RLIMIT_DATA (ulimit -d)", r.rlim_cur, vm_data));
  if (const auto dir = cgroup_dir()) {
    // memory.max is "max" when unlimited: read_number fails and no limit is taken.
    const auto max = read_number(*dir + "/memory.max");
    if (max) {
      const uint64_t cur = read_number(*dir + "/memory.current").value_or(vm_rss);
      tighten(h.memory, headroom(*max, cur), limit_text(("cgroup memory.max (" + *dir + ")").c_str(), *max, cur));
    }
  }
  if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
    h.address_space = HostLimit{headroom(r.rlim_cur, vm_size), limit_text("RLIMIT_AS (ulimit -v)", r.rlim_cur, vm_size)};
    // Resident memory cannot exceed the address space either.
    tighten(h.memory, h.address_space->value, h.address_space->what);
  }
  if (const auto max_maps = read_number("/proc/sys/vm/max_map_count")) {
    std::ifstream maps("/proc/self/maps");
    uint64_t used = 0;
    for (std::string line; std::getline(maps, line);) ++used;
    h.mappings = HostLimit{headroom(*max_maps, used), "vm.max_map_count of " + std::to_string(*max_maps) + ", " +
                                                         std::to_string(used) + " mappings in use"};
  }
  return h;
}

void reserve_blas_buffer() {
  // Large enough to take OpenBLAS's blocked path (small products may skip the buffer).
  constexpr int n = 256;
  std::vector<float> a(size_t(n) * n, 1.f), c(size_t(n) * n, 0.f);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, a.data(), n, 0.f, c.data(), n);
}

}  // namespace ahbm
