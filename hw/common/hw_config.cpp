#include "hw/common/hw_config.h"

namespace ahbm {

namespace {

constexpr int64_t kMaxCycles = 1 << 20;
constexpr int64_t kMaxBytes = int64_t(1) << 50;

void read_gemm(JsonReader r, GemmConfig& g) {
  g.tile_m = int(r.integer("tile_m", g.tile_m, 1, 1024));
  g.tile_n = int(r.integer("tile_n", g.tile_n, 1, 1024));
  g.tile_k = int(r.integer("tile_k", g.tile_k, 1, 1024));
  g.issue_interval = int(r.integer("issue_interval", g.issue_interval, 1, kMaxCycles));
  g.pipeline_latency = int(r.integer("pipeline_latency", g.pipeline_latency, 0, kMaxCycles));
  r.finish();
}

void read_vector(JsonReader r, VectorConfig& v) {
  v.lanes = int(r.integer("lanes", v.lanes, 1, 4096));
  v.ops_per_score = int(r.integer("ops_per_score", v.ops_per_score, 1, 64));
  v.ops_per_merge = int(r.integer("ops_per_merge", v.ops_per_merge, 1, 64));
  r.finish();
}

}  // namespace

HwConfig parse_hw_config(const Json& j, const std::string& file) {
  HwConfig c;
  JsonReader r(j, file);
  c.clock_ghz = r.number("clock_ghz", c.clock_ghz, 0.01, 100.0);
  c.groups = int(r.integer("groups", c.groups, 1, 1024));
  c.chip_cubes = int(r.integer("chip_cubes", c.chip_cubes, 0, 1 << 16));
  c.q_tile_rows = int(r.integer("q_tile_rows", c.q_tile_rows, 0, 1 << 20));
  if (r.has("pe")) {
    JsonReader pe = r.object("pe");
    c.pe.sram_bytes = uint64_t(pe.integer("sram_bytes", int64_t(c.pe.sram_bytes), 1024, kMaxBytes));
    if (pe.has("gemm")) read_gemm(pe.object("gemm"), c.pe.gemm);
    if (pe.has("vector")) read_vector(pe.object("vector"), c.pe.vector);
    if (pe.has("hbm")) {
      JsonReader h = pe.object("hbm");
      c.pe.hbm.bandwidth_gbps = h.number("bandwidth_gbps", c.pe.hbm.bandwidth_gbps, 0.001, 1e6);
      c.pe.hbm.latency_ns = h.number("latency_ns", c.pe.hbm.latency_ns, 0.0, 1e6);
      c.pe.hbm.capacity_bytes =
          uint64_t(h.integer("capacity_bytes", int64_t(c.pe.hbm.capacity_bytes), 1024, kMaxBytes));
      h.finish();
    }
    if (pe.has("dma")) {
      JsonReader d = pe.object("dma");
      c.pe.dma.kv_tile_tokens = int(d.integer("kv_tile_tokens", c.pe.dma.kv_tile_tokens, 1, 1 << 16));
      c.pe.dma.buffers = int(d.integer("buffers", c.pe.dma.buffers, 1, 8));
      d.finish();
    }
    pe.finish();
  }
  if (r.has("cube")) {
    JsonReader cu = r.object("cube");
    c.cube.pes = int(cu.integer("pes", c.cube.pes, 1, 256));
    if (cu.has("q_buffer")) {
      JsonReader q = cu.object("q_buffer");
      c.cube.q_buffer.bytes = uint64_t(q.integer("bytes", int64_t(c.cube.q_buffer.bytes), 64, kMaxBytes));
      c.cube.q_buffer.read_ports = int(q.integer("read_ports", c.cube.q_buffer.read_ports, 1, 256));
      c.cube.q_buffer.port_bytes_per_cycle =
          int(q.integer("port_bytes_per_cycle", c.cube.q_buffer.port_bytes_per_cycle, 1, 1 << 16));
      c.cube.q_buffer.write_bytes_per_cycle =
          int(q.integer("write_bytes_per_cycle", c.cube.q_buffer.write_bytes_per_cycle, 1, 1 << 16));
      q.finish();
    }
    if (cu.has("reducer")) {
      JsonReader red = cu.object("reducer");
      c.cube.reducer.bus_bytes_per_cycle =
          int(red.integer("bus_bytes_per_cycle", c.cube.reducer.bus_bytes_per_cycle, 1, 1 << 16));
      c.cube.reducer.lanes = int(red.integer("lanes", c.cube.reducer.lanes, 1, 4096));
      red.finish();
    }
    cu.finish();
  }
  if (r.has("group")) {
    JsonReader g = r.object("group");
    c.group.cubes = int(g.integer("cubes", c.group.cubes, 1, 64));
    if (g.has("link")) {
      JsonReader l = g.object("link");
      c.group.link.bandwidth_gbps = l.number("bandwidth_gbps", c.group.link.bandwidth_gbps, 0.001, 1e6);
      c.group.link.latency_ns = l.number("latency_ns", c.group.link.latency_ns, 0.0, 1e6);
      c.group.link.topology = l.string("topology", c.group.link.topology, {"chain", "ring", "tree"});
      l.finish();
    }
    g.finish();
  }
  if (r.has("noc")) {
    JsonReader n = r.object("noc");
    c.noc.model = n.string("model", c.noc.model);  // checked against the registry by the chip
    if (n.has("params")) {
      const Json& p = n.raw("params");
      if (!p.is_object()) n.fail("params", "must be a JSON object");
      c.noc.params = p;
    }
    n.finish();
  }
  if (r.has("host")) {
    JsonReader h = r.object("host");
    c.host.bandwidth_gbps = h.number("bandwidth_gbps", c.host.bandwidth_gbps, 0.001, 1e6);
    c.host.latency_ns = h.number("latency_ns", c.host.latency_ns, 0.0, 1e9);
    c.host.kernel_launch_ns = h.number("kernel_launch_ns", c.host.kernel_launch_ns, 0.0, 1e9);
    h.finish();
  }
  if (r.has("remote")) {
    JsonReader m = r.object("remote");
    c.remote.request_bytes = int(m.integer("request_bytes", c.remote.request_bytes, 1, 1 << 20));
    c.remote.overhead_ns = m.number("overhead_ns", c.remote.overhead_ns, 0.0, 1e9);
    c.remote.page_tokens = int(m.integer("page_tokens", c.remote.page_tokens, 1, 1 << 20));
    c.remote.page_rebuild_cycles = int(m.integer("page_rebuild_cycles", c.remote.page_rebuild_cycles, 0, kMaxCycles));
    m.finish();
  }
  if (r.has("fault_injection")) c.fault = parse_fault_config(r.object("fault_injection"));
  r.finish();
  check_hw_config(c, file);
  return c;
}

HwConfig load_hw_config(const std::string& path) { return parse_hw_config(load_json_file(path), path); }

Json to_json(const HwConfig& c) {
  const auto& g = c.pe.gemm;
  Json j{
      {"clock_ghz", c.clock_ghz},
      {"groups", c.groups},
      {"chip_cubes", c.chip_cubes},
      {"q_tile_rows", c.q_tile_rows},
      {"pe",
       {{"sram_bytes", c.pe.sram_bytes},
        {"gemm",
         {{"tile_m", g.tile_m}, {"tile_n", g.tile_n}, {"tile_k", g.tile_k},
          {"issue_interval", g.issue_interval}, {"pipeline_latency", g.pipeline_latency}}},
        {"vector",
         {{"lanes", c.pe.vector.lanes}, {"ops_per_score", c.pe.vector.ops_per_score},
          {"ops_per_merge", c.pe.vector.ops_per_merge}}},
        {"hbm",
         {{"bandwidth_gbps", c.pe.hbm.bandwidth_gbps}, {"latency_ns", c.pe.hbm.latency_ns},
          {"capacity_bytes", c.pe.hbm.capacity_bytes}}},
        {"dma", {{"kv_tile_tokens", c.pe.dma.kv_tile_tokens}, {"buffers", c.pe.dma.buffers}}}}},
      {"cube",
       {{"pes", c.cube.pes},
        {"q_buffer",
         {{"bytes", c.cube.q_buffer.bytes}, {"read_ports", c.cube.q_buffer.read_ports},
          {"port_bytes_per_cycle", c.cube.q_buffer.port_bytes_per_cycle},
          {"write_bytes_per_cycle", c.cube.q_buffer.write_bytes_per_cycle}}},
        {"reducer",
         {{"bus_bytes_per_cycle", c.cube.reducer.bus_bytes_per_cycle}, {"lanes", c.cube.reducer.lanes}}}}},
      {"group",
       {{"cubes", c.group.cubes},
        {"link",
         {{"bandwidth_gbps", c.group.link.bandwidth_gbps}, {"latency_ns", c.group.link.latency_ns},
          {"topology", c.group.link.topology}}}}},
      {"noc", {{"model", c.noc.model}, {"params", c.noc.params}}},
      {"host",
       {{"bandwidth_gbps", c.host.bandwidth_gbps}, {"latency_ns", c.host.latency_ns},
        {"kernel_launch_ns", c.host.kernel_launch_ns}}},
      {"remote",
       {{"request_bytes", c.remote.request_bytes}, {"overhead_ns", c.remote.overhead_ns},
        {"page_tokens", c.remote.page_tokens}, {"page_rebuild_cycles", c.remote.page_rebuild_cycles}}},
  };
  if (c.fault.any()) j["fault_injection"] = to_json(c.fault);  // shown only when a test breaks the model
  return j;
}

}  // namespace ahbm
