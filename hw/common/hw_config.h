#pragma once
// Hardware configuration: plain structs, parsed once from JSON and validated with messages that
// name the field, the value and the allowed range. Every parameter is documented in
// docs/model.md (meaning, unit, default, and the public figure the default follows).
#include <cstdint>
#include <string>

#include "hw/common/fault_injection.h"
#include "hw/common/json_reader.h"

namespace ahbm {

struct GemmConfig {
  int tile_m = 16;            // rows of Q per engine tile
  int tile_n = 16;            // output columns per engine tile
  int tile_k = 16;            // reduction depth per engine tile
  int issue_interval = 16;    // cycles between two tile issues (throughput)
  int pipeline_latency = 32;  // cycles from the last issue until its result is written back
};

struct VectorConfig {
  int lanes = 32;            // fp32 elements per cycle
  int ops_per_score = 5;     // passes over each score: scale, mask, row max, exp, row sum
  int ops_per_merge = 4;     // passes over each (o, l) element in one state merge/rescale
};

struct HbmSliceConfig {
  double bandwidth_gbps = 307.2;        // GB/s from the PE's HBM slice into its SRAM
  double latency_ns = 30.0;             // first-byte latency of a DMA burst
  uint64_t capacity_bytes = 2ull << 30;  // bytes of HBM owned by one PE
};

struct DmaConfig {
  int kv_tile_tokens = 64;  // KV tokens per DMA tile (K and V rows)
  int buffers = 2;          // SRAM tile slots: 2 = double buffering, 3 = triple
};

struct PeConfig {
  GemmConfig gemm;
  VectorConfig vector;
  HbmSliceConfig hbm;
  DmaConfig dma;
  uint64_t sram_bytes = 512 * 1024;  // local SRAM: Q tile + KV tile slots + scores + state
};

struct QBufferConfig {
  uint64_t bytes = 256 * 1024;  // capacity of the CUBE's shared Q buffer
  int read_ports = 2;           // PEs reading at the same time
  int port_bytes_per_cycle = 64;
  int write_bytes_per_cycle = 64;  // multicast arrivals written into the buffer
};

struct ReducerConfig {
  int bus_bytes_per_cycle = 64;  // intra-CUBE bus carrying PE states to the reducer
  int lanes = 32;                // reducer vector lanes (fp32 per cycle)
};

struct CubeConfig {
  int pes = 8;
  QBufferConfig q_buffer;
  ReducerConfig reducer;
};

struct LinkConfig {
  double bandwidth_gbps = 64.0;  // per direction, per inter-CUBE reduction link
  double latency_ns = 20.0;
  std::string topology = "tree";  // chain | ring | tree
};

struct GroupConfig {
  int cubes = 4;  // CUBEs per KV-head group
  LinkConfig link;
};

struct NocConfig {
  std::string model = "ideal";
  Json params = Json::object();  // interpreted by the chosen model, which validates it
};

struct HostConfig {
  double bandwidth_gbps = 64.0;  // host -> Q source (and results back)
  double latency_ns = 500.0;
  double kernel_launch_ns = 0.0;  // per kernel launch, paid serially on the host (T_create + T_launch)
};

// KV moved between PEs (Policy B1 remap, B2 remote reads; docs/policies.md).
struct RemoteConfig {
  int request_bytes = 64;         // a remote-read request packet on the NoC
  double overhead_ns = 100.0;     // symmetric-memory cost at the serving CUBE per request
  int page_tokens = 16;           // KV tokens per page-table entry
  int page_rebuild_cycles = 32;   // cycles to rebuild one page-table entry after a remap
};

struct HwConfig {
  double clock_ghz = 1.0;
  int groups = 1;       // KV-head groups on the chip
  int chip_cubes = 0;   // CUBEs the chip has; 0 = exactly groups x group.cubes
  int q_tile_rows = 0;  // Q rows per tile; 0 = largest that fits (runtime decides)
  PeConfig pe;
  CubeConfig cube;
  GroupConfig group;
  NocConfig noc;
  HostConfig host;
  RemoteConfig remote;
  FaultConfig fault;  // test-only fault injection (docs/reliability.md); off by default

  int pes_per_group() const { return cube.pes * group.cubes; }
};

// Parses and validates; missing fields keep their defaults, unknown keys are errors. Ends with
// check_hw_config, so a parsed config is also consistent.
HwConfig parse_hw_config(const Json& j, const std::string& file);
HwConfig load_hw_config(const std::string& path);
Json to_json(const HwConfig& c);
// Cross-field consistency of a config (docs/reliability.md): the DMA tile is whole GEMM
// tiles, the groups fit the chip, fault-injection targets exist. Throws InputError naming `file`.
void check_hw_config(const HwConfig& c, const std::string& file);

}  // namespace ahbm
