#include "runtime/policy/cost_model.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "hw/common/model/attn_state.h"
#include "hw/common/model/engines.h"
#include "hw/common/base/error.h"
#include "hw/common/model/merge_tree.h"
#include "hw/common/model/resource_times.h"
#include "hw/link/reduction_network.h"

namespace ahbm {

Json PolicyEstimate::to_json() const {
  Json j{{"policy", policy_name(policy)}, {"total_ns", total_ns}, {"q_ns", q_ns},   {"remap_ns", remap_ns},
         {"gemm_ns", gemm_ns},           {"kv_ns", kv_ns},       {"reduce_ns", reduce_ns}, {"other_ns", other_ns},
         {"energy_j", energy_j},         {"dynamic_energy_j", dynamic_j}};
  if (!hbm_assumed.empty()) j["hbm_assumed"] = hbm_assumed;
  return j;
}

NocEstimate noc_estimate(const HwConfig& hw, const NocRegistry* nocs, const std::string& hw_file) {
  NocEstimateInput in;
  in.params = hw.noc.params;
  in.clock_ghz = hw.clock_ghz;
  in.config_file = hw_file;
  if (nocs) return nocs->get(hw.noc.model, hw_file).estimate_for(in);
  return NocRegistry::with_builtin_models().get(hw.noc.model, hw_file).estimate_for(in);
}

namespace {

struct Model {
  const HwConfig& hw;
  NocEstimate noc;
  double cyc;
  TimeUnits<double> units;
  HbmSliceConfig hbm;  // the slice's closed form (hbm_closed_form: banked as its calibrated simple slice)
  Model(const HwConfig& h, const NocEstimate& n)
      : hw(h), noc(n), cyc(1.0 / h.clock_ghz), units(h.clock_ghz), hbm(hbm_closed_form(h.pe.hbm)) {}

  // The engines' work on one KV block of n tokens (engines.h), in ns.
  KvBlockPipeline<double>::Durations block_ns(int rows, int n, int d, DType t) const {
    const BlockWork w = block_work(hw.pe, uint64_t(rows), uint64_t(n), uint64_t(d), t);
    return {double(w.qk) * cyc, double(w.softmax) * cyc, double(w.pv) * cyc};
  }
  // K and V bursts of n tokens from one slice: latencies overlap, transfers do not.
  double slice_ns(uint64_t kv_bytes) const { return hbm_read<double>(hbm, kv_bytes); }
  // The array's time for a burst alone (a write, or a slice's share of the step's reads).
  double burst_ns(uint64_t bytes) const { return hbm_burst<double>(hbm, bytes); }
  double remote_ns(uint64_t kv_bytes) const {
    return noc.time_ns(uint64_t(hw.remote.request_bytes)) + hw.remote.overhead_ns + slice_ns(kv_bytes) + noc.time_ns(kv_bytes);
  }
  double merge_ns(int rows, int d) const {
    return double(merge_cycles(hw.cube.reducer.lanes, hw.pe.vector.ops_per_merge, uint64_t(rows), uint64_t(d))) * cyc;
  }
  // Books `duration` on one of `units` (free times, ns) from `ready` on, as a ServerPool does
  // (timing.h book_server); returns when it ends.
  static double book(std::vector<double>& units, double ready, double duration) {
    return book_server(units, ready, duration, [](double a, double b) { return a + b; }) + duration;
  }
};

struct PeTrack {
  double free = 0;          // compute side free (after sending its last state)
  std::vector<double> slot_free;  // when each SRAM KV slot is released by compute
  double dma = 0;           // DMA cursor
  double first_q = -1;      // when it held its first Q tile
  double gemm = 0;          // sum of compute
  double last_local_end = 0;
};

// The group's resources one job leaves to the next. Streamed jobs (A..B4) start from a fresh
// one each (the Q source interleaves the heads of a group; the model approximates them as
// running side by side). KV-broadcast jobs (B5) of one group share one: the Q source sends them
// head after head and the KV mover broadcasts them in that order (hw/common/sim/sim_shared.cpp), so
// a head starts where the previous one left the PEs, their SRAM slots, the Q buffer ports, the
// CUBE buses, reducers and links.
struct GroupState {
  std::vector<PeTrack> pe;
  std::vector<double> qwrite_free, bus_free, link_free;
  std::vector<std::vector<double>> red_units;  // per CUBE: its reducer's merge units (cube.reducer.units)
  std::vector<double> red_next;                // per CUBE, serial order: when its reducer takes the next arrival
  std::vector<std::vector<double>> ports;
};

GroupState fresh_group(const HwConfig& hw) {
  const size_t cubes = size_t(hw.group.cubes);
  GroupState g;
  g.pe.resize(size_t(hw.pes_per_group()));
  for (auto& x : g.pe) x.slot_free.assign(size_t(std::max(1, hw.pe.dma.buffers)), 0.0);
  g.qwrite_free.assign(cubes, 0);
  g.bus_free.assign(cubes, 0);
  g.red_units.assign(cubes, std::vector<double>(size_t(hw.cube.reducer.units), 0.0));
  g.red_next.assign(cubes, 0.0);
  g.link_free.assign(cubes, 0);
  g.ports.assign(cubes, std::vector<double>(size_t(hw.cube.q_buffer.read_ports), 0));
  return g;
}

struct JobResult {
  double end = 0;
  PolicyEstimate parts;
};

// One KV block as a PE's pipeline takes it: the engines' work and the transfer that brings it.
struct BlockCost {
  KvBlockPipeline<double>::Durations work;
  double dma;
};

// Everything estimate_job reads of a job that does not depend on when the job starts or on what
// earlier jobs left behind (host link, Q buffer ports, PEs): the KV blocks each PE streams per
// tile with their costs, the compute term of each (tile, PE), the slices' and NoC ports' load and
// the remap's copy time. A pure function of the job's shape, the hardware and the NoC estimate,
// so the KV heads of a step with one shape share one (ShapeMemo) and only the timed part runs
// per head.
struct JobShape {
  double remap_copied = 0, remap_rebuild = 0;            // B1: copies, then page-table rebuild, ns
  // Each (tile, PE)'s KV blocks with their costs and its compute term (the blocks with their KV in
  // SRAM, ns). The PEs stream the same lists tile after tile (every row sees the shared prefix),
  // so each distinct list is kept and costed once: list_of[tile][pe] indexes `lists` (-1 when the
  // PE has no part in the tile).
  struct BlockList {
    std::vector<BlockCost> blocks;
    double alone_end = 0;
    BlockCounts counts;  // the PE's counters over the blocks (engines.h block_counts)
  };
  std::vector<BlockList> lists;
  std::vector<std::vector<int>> list_of;  // [tile][pe]
  const BlockList& at(size_t tile, int pe) const { return lists[size_t(list_of[tile][size_t(pe)])]; }
  std::vector<std::vector<double>> slice_load;           // [tile][pe]: load that tile puts on each slice, ns
  std::vector<double> port_ns;                           // per CUBE: NoC port time of KV moved in the step
  std::vector<double> write_ns;                          // per PE: its KV writes before it streams, ns
  Activity activity;  // what the job's modules count (PolicyEstimate::activity), each stage adding its own
};

// The stages of shape_of, each named after the module whose work it costs.

// A NoC delivery of `bytes` to one destination as NocStats counts it: the payload, and its flits
// through each router on the way (NocEstimate::flit_hops).
void noc_delivery(const Model& m, uint64_t bytes, Activity& a) {
  a.noc_bytes += bytes;
  a.flit_hops += uint64_t(std::llround(m.noc.flit_hops(bytes)));
}

// The remap's copies as the NoC delivers them (B1): one copy of every range to each CUBE that
// has a PE keeping it, as (CUBE, bytes).
std::vector<std::pair<int, uint64_t>> remap_deliveries(const AttentionJob& job, int per_cube) {
  const uint64_t row = kv_row_bytes(job);
  std::vector<std::pair<int, uint64_t>> out;
  std::set<std::tuple<int, int, int, int>> seen;
  for (size_t p = 0; p < job.replicas.size(); ++p)
    for (const KvReplica& r : job.replicas[p])
      if (seen.insert({int(p) / per_cube, r.src_pe, r.first, r.count}).second)
        out.push_back({int(p) / per_cube, 2 * uint64_t(r.count) * row});
  return out;
}

// Pe::remap (B1): owners read each copied range once, the NoC multicasts it, the keepers write it;
// then each PE rebuilds its page table.
void pe_remap(const Model& m, const AttentionJob& job, JobShape& js) {
  const HwConfig& hw = m.hw;
  const int pes = hw.pes_per_group(), per_cube = hw.cube.pes, cubes = hw.group.cubes;
  const int kv_tile = hw.pe.dma.kv_tile_tokens;
  const uint64_t row = kv_row_bytes(job);
  std::vector<double> src_busy(size_t(pes), 0), dst_busy(size_t(pes), 0);
  std::map<std::tuple<int, int, int>, int> copies;
  double pages_max = 0;
  for (size_t p = 0; p < job.replicas.size(); ++p) {
    double pages = 0;
    for (const KvReplica& r : job.replicas[p]) {
      copies[{r.src_pe, r.first, r.count}]++;
      dst_busy[p] += m.burst_ns(2 * uint64_t(r.count) * row);
      pages += double(ceil_div(uint64_t(r.count), uint64_t(hw.remote.page_tokens)));
    }
    pages_max = std::max(pages_max, pages);
  }
  double copied = 0;
  Activity& a = js.activity;
  for (size_t p = 0; p < job.replicas.size(); ++p)
    for (const KvReplica& r : job.replicas[p]) a.hbm_bytes += 2 * uint64_t(r.count) * row;  // the keepers' writes
  for (const auto& [range, n] : copies) {
    const int src = std::get<0>(range), count = std::get<2>(range);
    a.hbm_bytes += 2 * uint64_t(count) * row;  // the owner's one read of the range
    src_busy[size_t(src)] += m.burst_ns(2 * uint64_t(count) * row);
    copied = std::max(copied, src_busy[size_t(src)] + m.hbm.latency_ns +
                                  m.noc.time_ns(2 * uint64_t(std::min(count, kv_tile)) * row));
  }
  for (double b : dst_busy) copied = std::max(copied, b);
  // Each CUBE's NoC ejection port takes one copy of every range one of its PEs keeps.
  std::vector<double> eject(size_t(cubes), 0);
  for (const auto& [cube, bytes] : remap_deliveries(job, per_cube)) {
    noc_delivery(m, bytes, a);
    if (m.noc.bandwidth_gbps > 0) eject[size_t(cube)] += double(bytes) / m.noc.bandwidth_gbps;
  }
  if (m.noc.bandwidth_gbps > 0)
    for (double e : eject) copied = std::max(copied, e + m.noc.latency_ns);
  js.remap_copied = copied;
  js.remap_rebuild = pages_max * hw.remote.page_rebuild_cycles * m.cyc;
}

// A remote read of `bytes` over the NoC (KvDma): its request, then the data.
void remote_read(const Model& m, uint64_t bytes, Activity& a) {
  noc_delivery(m, uint64_t(m.hw.remote.request_bytes), a);
  noc_delivery(m, bytes, a);
}

// KvDma::write_kv (hw/pe/kv_dma.cpp): the step's KV writes, one after another before the PE streams: a copy's read (its
// own slice, or a remote read over the NoC), then the K and V bursts written (a write's latency is
// hidden: the slice has it stored once the bytes have streamed in).
void pe_write_kv(const Model& m, const AttentionJob& job, JobShape& js) {
  const int pes = m.hw.pes_per_group();
  const uint64_t row = kv_row_bytes(job);
  js.write_ns.assign(size_t(pes), 0);
  if (m.hw.pe.dma.kv_writes != KvWritePolicy::timed) return;
  for (int p = 0; p < pes; ++p)
    for (const KvWrite& w : pe_kv_writes(job, p)) {
      const uint64_t b = 2 * uint64_t(w.count) * row;
      if (w.copy()) js.write_ns[size_t(p)] += w.src_pe == p ? m.slice_ns(b) : m.remote_ns(b);
      js.write_ns[size_t(p)] += m.burst_ns(b);
      js.activity.hbm_bytes += w.copy() ? 2 * b : b;  // a copy's read, then the write
      if (w.copy() && w.src_pe != p) remote_read(m, b, js.activity);
    }
}

// The PE's DMA: the KV tiles each PE streams for each Q tile, as it streams them (pe_kv_blocks:
// pe.dma.masked_tiles); none for a KV-broadcast job (the KV mover streams the owners' shards).
using Streamed = std::vector<std::vector<std::vector<KvBlock>>>;  // [tile][pe]
Streamed pe_dma_blocks(const Model& m, const AttentionJob& job) {
  const int pes = m.hw.pes_per_group();
  const bool skip = m.hw.pe.dma.masked_tiles == MaskedTilePolicy::skip;
  Streamed streamed(job.tiles.size(), std::vector<std::vector<KvBlock>>(size_t(pes)));
  if (!job.kv_broadcast)
    for (size_t i = 0; i < job.tiles.size(); ++i)
      for (int p = 0; p < pes; ++p)
        if (tile_has_pe(job.tiles[i], p))
          streamed[i][size_t(p)] = pe_kv_blocks(job, p, job.tiles[i], m.hw.pe.dma.kv_tile_tokens, skip);
  return streamed;
}
// The tokens the blocks of (tile i, PE p) take from each of the PE's segments.
std::vector<uint64_t> segment_tokens(const Streamed& streamed, size_t i, int p, size_t segments) {
  std::vector<uint64_t> n(segments, 0);
  for (const KvBlock& b : streamed[i][size_t(p)]) n[size_t(b.segment)] += uint64_t(b.n);
  return n;
}

// The HBM slices: load each serves for each Q tile (own DMA + remote readers, B2). By the end of
// tile i a PE's slice has served tiles 0..i (slice_served in estimate_job): a DMA-path lower bound
// for the end of tile i on that PE. (A bound on the whole step's load at every tile would hold
// each early tile back until the last tile's KV was read.)
void hbm_slice_loads(const Model& m, const AttentionJob& job, const Streamed& streamed, JobShape& js) {
  const int pes = m.hw.pes_per_group();
  const uint64_t row = kv_row_bytes(job);
  js.slice_load.assign(job.tiles.size(), std::vector<double>(size_t(pes), 0));
  if (job.kv_broadcast) return;
  for (size_t i = 0; i < job.tiles.size(); ++i)
    for (int p = 0; p < pes; ++p)
      if (tile_has_pe(job.tiles[i], p)) {
        const std::vector<KvSegment> segs = pe_segments(job, p);
        const std::vector<uint64_t> n = segment_tokens(streamed, i, p, segs.size());
        for (size_t k = 0; k < segs.size(); ++k) js.slice_load[i][size_t(segs[k].src_pe)] += m.burst_ns(2 * n[k] * row);
        for (const KvBlock& b : streamed[i][size_t(p)]) {
          js.activity.hbm_bytes += 2 * uint64_t(b.n) * row;
          if (b.remote) remote_read(m, 2 * uint64_t(b.n) * row, js.activity);
        }
      }
}

// The NoC's ports (flit-level models): bytes each CUBE must receive (and send) for KV moved during
// the step; no PE of the CUBE finishes streaming before its port has carried them.
void noc_port_loads(const Model& m, const AttentionJob& job, const Streamed& streamed, JobShape& js) {
  const int pes = m.hw.pes_per_group(), per_cube = m.hw.cube.pes, cubes = m.hw.group.cubes;
  const uint64_t row = kv_row_bytes(job);
  js.port_ns.assign(size_t(cubes), 0);
  if (m.noc.bandwidth_gbps <= 0) return;
  std::vector<double> in(size_t(cubes), 0), out(size_t(cubes), 0);
  if (job.kv_broadcast) {
    std::map<int, int> passes;
    for (const QTile& t : job.tiles) passes[t.pes[0]]++;
    int most = 0;
    for (const auto& [p, n] : passes) most = std::max(most, n);
    for (int c = 0; c < cubes; ++c)
      for (int p = 0; p < pes; ++p) {
        const double b = double(2 * uint64_t(job.shards[size_t(p)].tokens) * row) * most;
        in[size_t(c)] += b;
        if (c == 0) out[size_t(p / per_cube)] += b;
      }
  } else {
    for (size_t i = 0; i < job.tiles.size(); ++i)
      for (int p = 0; p < pes; ++p)
        if (tile_has_pe(job.tiles[i], p)) {
          const std::vector<KvSegment> segs = pe_segments(job, p);
          const std::vector<uint64_t> n = segment_tokens(streamed, i, p, segs.size());
          for (size_t k = 0; k < segs.size(); ++k)
            if (segs[k].remote) {
              in[size_t(p / per_cube)] += double(2 * n[k] * row);
              out[size_t(segs[k].src_pe / per_cube)] += double(2 * n[k] * row);
            }
        }
  }
  for (int c = 0; c < cubes; ++c) js.port_ns[size_t(c)] = std::max(in[size_t(c)], out[size_t(c)]) / m.noc.bandwidth_gbps;
}

// The KV blocks the KV mover broadcasts in one pass of a KV-broadcast job (B5): every owner's
// shard cut into `kv_tile` tokens, in owner order; their token counts.
std::vector<int> broadcast_blocks(const AttentionJob& job, int kv_tile) {
  std::vector<int> n;
  for (const KvShard& s : job.shards)
    for (int f = 0; f < s.tokens; f += kv_tile) n.push_back(std::min(kv_tile, s.tokens - f));
  return n;
}

// What the PE counts over one (tile, PE)'s blocks (engines.h block_counts).
BlockCounts pe_block_counts(const Model& m, const AttentionJob& job, int rows, const std::vector<KvBlock>& streamed) {
  BlockCounts c;
  const auto add = [&](int n) {
    c += block_counts(m.hw.pe.vector, uint64_t(rows), uint64_t(n), uint64_t(job.head_dim), job.elem_bytes());
  };
  if (job.kv_broadcast) {
    for (int n : broadcast_blocks(job, m.hw.pe.dma.kv_tile_tokens)) add(n);
  } else {
    for (const KvBlock& s : streamed) add(s.n);
  }
  return c;
}

// One (tile, PE)'s blocks as (compute, transfer) pairs: the PE's engines' work and the transfer
// that brings each block (its slice, a remote read, or the KV mover's broadcast).
std::vector<BlockCost> pe_block_costs(const Model& m, const AttentionJob& job, int rows, const std::vector<KvBlock>& streamed) {
  const int d = job.head_dim;
  const uint64_t row = kv_row_bytes(job);
  std::vector<BlockCost> blocks;
  if (job.kv_broadcast) {
    // Owners read and multicast; reads of different owners overlap, so only slots limit it.
    for (int n : broadcast_blocks(job, m.hw.pe.dma.kv_tile_tokens)) {
      const uint64_t b = 2 * uint64_t(n) * row;
      blocks.push_back({m.block_ns(rows, n, d, job.dtype), m.slice_ns(b) + m.noc.time_ns(b)});
    }
    return blocks;
  }
  for (const KvBlock& s : streamed) {
    const uint64_t b = 2 * uint64_t(s.n) * row;
    blocks.push_back({m.block_ns(rows, s.n, d, job.dtype), s.remote ? m.remote_ns(b) : m.slice_ns(b)});
  }
  return blocks;
}

// The PE's engines: each (tile, PE)'s blocks with their costs, and the compute term: the same
// blocks placed on the engines (engines.h KvBlockPipeline) with their KV in SRAM. A list is known
// by the tile's rows and its blocks' sizes and sources (all its costs depend on).
void pe_engine_lists(const Model& m, const AttentionJob& job, const Streamed& streamed, JobShape& js) {
  const int pes = m.hw.pes_per_group();
  js.list_of.assign(job.tiles.size(), std::vector<int>(size_t(pes), -1));
  std::map<std::vector<int>, int> known;
  std::vector<int> key;
  const auto ignore = [](EngineOp, int, double, double) {};
  for (size_t i = 0; i < job.tiles.size(); ++i) {
    const int R = job.tiles[i].rows();
    for (int p = 0; p < pes; ++p) {
      if (!tile_has_pe(job.tiles[i], p)) continue;
      key.assign(1, R);
      if (!job.kv_broadcast)  // a broadcast list is the same for every PE: the owners' shards
        for (const KvBlock& s : streamed[i][size_t(p)]) key.push_back(2 * s.n + int(s.remote));
      const auto [it, fresh] = known.emplace(key, int(js.lists.size()));
      js.list_of[i][size_t(p)] = it->second;
      if (!fresh) continue;
      js.lists.emplace_back();
      js.lists.back().blocks = pe_block_costs(m, job, R, streamed[i][size_t(p)]);
      js.lists.back().counts = pe_block_counts(m, job, R, streamed[i][size_t(p)]);
      KvBlockPipeline<double> alone(m.hw.pe.ping_pong());
      alone.begin(0.0);
      for (const BlockCost& blk : js.lists.back().blocks) alone.add(0, 0.0, blk.work, ignore);
      alone.flush(ignore);
      js.lists.back().alone_end = alone.end();
    }
  }
  for (size_t i = 0; i < job.tiles.size(); ++i)
    for (int p = 0; p < pes; ++p)
      if (js.list_of[i][size_t(p)] >= 0) {
        const BlockCounts& c = js.at(i, p).counts;
        js.activity.macs += c.macs, js.activity.vector_ops += c.vector_ops, js.activity.sram_bytes += c.sram_bytes;
      }
}

// KvMover (B5): each pass, the owners read their shards once and multicast each KV block to the
// CUBEs of the pass's PEs.
void kv_mover_traffic(const Model& m, const AttentionJob& job, JobShape& js) {
  if (!job.kv_broadcast) return;
  const int per_cube = m.hw.cube.pes;
  const uint64_t row = kv_row_bytes(job);
  const std::vector<int> pass_of = broadcast_pass_of_tiles(job);
  std::map<int, std::set<int>> cubes_of_pass;
  for (size_t i = 0; i < job.tiles.size(); ++i)
    for (int p : job.tiles[i].pes) cubes_of_pass[pass_of[i]].insert(p / per_cube);
  const std::vector<int> blocks = broadcast_blocks(job, m.hw.pe.dma.kv_tile_tokens);
  for (const auto& [pass, cubes] : cubes_of_pass)
    for (int n : blocks) {
      const uint64_t b = 2 * uint64_t(n) * row;
      js.activity.hbm_bytes += b;
      for (size_t c = 0; c < cubes.size(); ++c) noc_delivery(m, b, js.activity);
    }
}

// Each Q tile's traffic outside the PEs' KV: Q over the host link, multicast to the tile's CUBEs,
// written into each CUBE's Q buffer and read out once per PE; each PE's state over its CUBE bus
// into the reducer and merged there; the CUBEs' states over the inter-CUBE links, merged and
// normalised at the root; O over the NoC to the host port and over the host link.
void tile_traffic(const Model& m, const AttentionJob& job, JobShape& js) {
  const int per_cube = m.hw.cube.pes, d = job.head_dim;
  const int ops = m.hw.pe.vector.ops_per_merge;
  Activity& a = js.activity;
  std::vector<int> tcubes;
  for (const QTile& t : job.tiles) {
    const uint64_t rows = uint64_t(t.rows()), qbytes = q_tile_bytes(job, t.rows());
    const uint64_t state = AttnState::wire_bytes(t.rows(), d), obytes = o_tile_bytes(rows, uint64_t(d));
    tile_cubes(t, m.hw.group.cubes, per_cube, tcubes);
    a.host_bytes += qbytes + obytes;
    for (size_t c = 0; c < tcubes.size(); ++c) noc_delivery(m, qbytes, a);
    noc_delivery(m, obytes, a);
    a.q_buffer_bytes += qbytes * tcubes.size();
    for (int c : tcubes) {
      uint64_t states = 0;
      for (int p = c * per_cube; p < (c + 1) * per_cube; ++p)
        if (tile_has_pe(t, p)) ++states;
      a.q_buffer_bytes += qbytes * states;
      a.sram_bytes += qbytes * states;  // each PE stages its Q tile
      a.state_bytes += state * states;
      a.merge_ops += merge_ops(ops, rows, uint64_t(d)) * (states > 0 ? states - 1 : 0);
    }
    const uint64_t links = tcubes.empty() ? 0 : tcubes.size() - 1;
    a.link_bytes += state * links;
    a.merge_ops += merge_ops(ops, rows, uint64_t(d)) * links + normalise_ops(rows, uint64_t(d));
  }
}

JobShape shape_of(const Model& m, const AttentionJob& job) {
  JobShape js;
  if (job.remap) pe_remap(m, job, js);
  pe_write_kv(m, job, js);
  const Streamed streamed = pe_dma_blocks(m, job);
  hbm_slice_loads(m, job, streamed, js);
  noc_port_loads(m, job, streamed, js);
  pe_engine_lists(m, job, streamed, js);
  kv_mover_traffic(m, job, js);
  tile_traffic(m, job, js);
  return js;
}

// Whether two jobs have the same JobShape: equal on every shape field of the job's timing fields
// (job.h AHBM_JOB_TIMING_FIELDS), which are the fields shape_of reads.
bool same_shape(const AttentionJob& a, const AttentionJob& b) {
#define AHBM_SAME_SHAPE_FIELD(field, kind) \
  if (JobFieldKind::kind == JobFieldKind::shape && !timing_equal(a.field, b.field)) return false;
  AHBM_JOB_TIMING_FIELDS(AHBM_SAME_SHAPE_FIELD)
#undef AHBM_SAME_SHAPE_FIELD
  return true;
}

// The shapes of one job set, computed once per distinct shape (a step's KV heads are alike): a
// pure memo, owned by one estimate, so it changes no number.
class ShapeMemo {
 public:
  explicit ShapeMemo(const Model& m) : m_(m) {}
  const JobShape& of(const AttentionJob& job) {
    for (const auto& [seen, shape] : known_)
      if (same_shape(*seen, job)) return *shape;
    known_.emplace_back(&job, std::make_unique<JobShape>(shape_of(m_, job)));
    return *known_.back().second;
  }

 private:
  const Model& m_;
  std::vector<std::pair<const AttentionJob*, std::unique_ptr<JobShape>>> known_;
};

// The stages of estimate_job, each named after the module whose timing it follows.

// The working buffers of estimate_tile, reused tile after tile and job after job by one estimate:
// an estimate visits every Q tile of every candidate layout, and allocating these per tile cost
// more than the arithmetic. Only memory is reused: each is cleared or refilled before it is read.
struct TileScratch {
  std::vector<int> tpes, tcubes;              // the tile's PEs and CUBEs, ascending
  std::vector<double> pe_free, q_in_hand, local_end, cube_done, ready;  // q_in_hand, local_end: per PE
  std::vector<std::pair<double, int>> order;  // cube_reducer
  std::vector<std::pair<int, double>> arrivals;
  // reduction_parents(topology, n) for the group's one topology, by n (a pure function of both).
  const std::vector<int>& parents(ReductionTopology topology, size_t n) {
    if (n >= parents_of_.size()) parents_of_.resize(n + 1);
    if (!parents_of_[n]) parents_of_[n] = reduction_parents(topology, int(n));
    return *parents_of_[n];
  }

 private:
  std::vector<std::optional<std::vector<int>>> parents_of_;
};

// The host link's and the CUBEs' Q-buffer state that Q delivery reads and advances.
struct QPath {
  std::vector<double>& host;                // [0]: when the host link's chip-bound direction is free
  std::vector<double>& qwrite;              // per CUBE: its Q buffer's write port
  std::vector<std::vector<double>>& ports;  // per CUBE: its Q buffer's read ports
};

// QSource then the CUBEs' QBuffers: Q delivery of one tile over the host link (shared by all jobs,
// tiles in send order), the NoC multicast to the participating CUBEs, the CUBE's write port, then
// one read per PE through the read ports once the PE is free. Sets in_hand[p] (indexed by PE) to
// when each participating PE p holds the tile; `tcubes` are the tile's CUBEs (tile_cubes).
void q_source_to_buffers(const Model& m, const AttentionJob& job, const QTile& t, const std::vector<int>& tcubes,
                         double launch, QPath q, const std::vector<double>& pe_free, std::vector<double>& in_hand) {
  const HwConfig& hw = m.hw;
  const int per_cube = hw.cube.pes;
  const uint64_t qbytes = q_tile_bytes(job, t.rows());
  q.host[0] += host_upload<double>(hw.host, qbytes);
  const double arrive = std::max(q.host[0], launch) + m.noc.time_ns(qbytes);
  for (int c : tcubes) {
    const double written = std::max(arrive, q.qwrite[size_t(c)]) + q_buffer_write(m.units, hw.cube.q_buffer, qbytes);
    q.qwrite[size_t(c)] = written;
    for (int p = c * per_cube; p < (c + 1) * per_cube; ++p) {
      if (!tile_has_pe(t, p)) continue;
      auto port = std::min_element(q.ports[size_t(c)].begin(), q.ports[size_t(c)].end());
      const double start = std::max({written, *port, pe_free[size_t(p)]});
      *port = start + q_buffer_read(m.units, hw.cube.q_buffer, qbytes);
      in_hand[size_t(p)] = *port;
    }
  }
}

// KvMover (B5): the receivers of a pass advance in lockstep (the owner broadcasts a block only
// when every receiver has a free slot), so each starts computing when the slowest holds its Q.
// A PE reads its first Q tile once the group's previous head has left it (0 for the first).
// Delivery is rehearsed on copies: the tile loop delivers for real.
std::vector<double> kv_mover_pass_ready(const Model& m, const AttentionJob& job, double launch,
                                        const std::vector<double>& host_free, const GroupState& group,
                                        const std::vector<int>& pass_of_tile) {
  std::vector<double> pass_ready;
  std::vector<double> host(host_free), qw(group.qwrite_free), busy;
  for (const auto& x : group.pe) busy.push_back(x.free);
  auto prt = group.ports;
  std::vector<double> in_hand(busy.size(), 0.0);
  std::vector<int> tcubes;
  for (size_t i = 0; i < job.tiles.size(); ++i) {
    const QTile& t = job.tiles[i];
    const size_t pass = size_t(pass_of_tile[i]);
    if (pass >= pass_ready.size()) pass_ready.resize(pass + 1, 0.0);
    tile_cubes(t, m.hw.group.cubes, m.hw.cube.pes, tcubes);
    q_source_to_buffers(m, job, t, tcubes, launch, {host, qw, prt}, busy, in_hand);
    for (int p = 0; p < int(in_hand.size()); ++p)
      if (tile_has_pe(t, p)) pass_ready[pass] = std::max(pass_ready[pass], in_hand[size_t(p)]);
  }
  return pass_ready;
}

// The Pe's attention on one tile: the double-buffered pipeline as a max-plus recurrence over the
// blocks (JobShape). A transfer needs a free SRAM slot (released when compute finished the block
// that used it) and, for the PE's own DMA, the previous transfer done; compute needs Q, the
// previous block and this block's data. The engines place each block as the PE does (engines.h
// KvBlockPipeline): a block's slot is released when its P V ends; with ping_pong a pending P V
// (slot held, time unknown: +inf) goes first when no other slot is free or its next block comes
// too late. Returns when the compute path ends.
double pe_attention(const Model& m, bool kv_broadcast, const std::vector<BlockCost>& blocks, PeTrack& x, double start) {
  KvBlockPipeline<double> engines(m.hw.pe.ping_pong());
  engines.begin(start);
  const auto release = [&x](EngineOp op, int tag, double, double end) {
    if (op == EngineOp::gemm_pv) x.slot_free[size_t(tag)] = end;
  };
  constexpr double kHeld = std::numeric_limits<double>::infinity();
  for (const BlockCost& blk : blocks) {
    auto slot = std::min_element(x.slot_free.begin(), x.slot_free.end());
    if (*slot == kHeld) {
      engines.flush(release);
      slot = std::min_element(x.slot_free.begin(), x.slot_free.end());
    }
    const double ds = kv_broadcast ? *slot : std::max(x.dma, *slot);
    const double de = ds + blk.dma;
    x.dma = std::max(x.dma, de);
    *slot = kHeld;
    engines.add(int(slot - x.slot_free.begin()), std::max(de, start), blk.work, release);
  }
  engines.flush(release);
  return engines.end();
}

// CubeReducer of CUBE c: the states go over the CUBE bus (`bus` each) in the order the PEs finish
// and merge (`merge` each) on the reducer's units in the configured order (hw/common/model/merge_tree.h,
// as the reducer schedules them). `local_end` is indexed by PE. Returns when the CUBE's merged
// state is ready; each PE is free once its state is sent.
double cube_reducer(const Model& m, const QTile& t, int c, const std::vector<int>& tpes, const std::vector<double>& local_end,
                    GroupState& group, double bus, double merge, TileScratch& scratch) {
  const int per_cube = m.hw.cube.pes;
  const MergeOrder merging = m.hw.cube.reducer.order;
  std::vector<std::pair<double, int>>& order = scratch.order;
  order.clear();
  for (int p : tpes)
    if (p / per_cube == c) order.push_back({local_end[size_t(p)], p});
  std::sort(order.begin(), order.end());
  std::vector<std::pair<int, double>>& arrivals = scratch.arrivals;  // (rank in the CUBE, when its state is at the reducer)
  arrivals.clear();
  for (auto [end, p] : order) {
    const double sent = std::max(end, group.bus_free[size_t(c)]) + bus;
    group.bus_free[size_t(c)] = sent;
    group.pe[size_t(p)].free = sent;
    arrivals.push_back({tile_pe_rank_in_cube(t, p, per_cube), sent});
  }
  // Serial merges go one at a time (the reducer waits for each), tree merges on any free unit.
  std::vector<double>& units = group.red_units[size_t(c)];
  return MergeSchedule<double>::run(int(order.size()), merging, arrivals, [&](double ready) {
    if (merging == MergeOrder::tree) return Model::book(units, ready, merge);
    return group.red_next[size_t(c)] = Model::book(units, std::max(ready, group.red_next[size_t(c)]), merge);
  });
}

// ReductionNetwork: the inter-CUBE tree over the tile's CUBEs (hw/link's shape), each link busy for
// a state's bytes, then the root normalises. Returns when the root's O is ready.
double reduction_network(const Model& m, const QTile& t, int d, const std::vector<int>& tcubes,
                         const std::vector<double>& cube_done, GroupState& group, double merge, TileScratch& scratch) {
  const HwConfig& hw = m.hw;
  const bool shared_units = hw.cube.reducer.inter_cube == InterCubeMerge::shared;
  const uint64_t sbytes = AttnState::wire_bytes(t.rows(), d);
  const std::vector<int>& shape = scratch.parents(hw.group.link.topology, tcubes.size());
  std::vector<double>& ready = scratch.ready;
  ready.assign(tcubes.size(), 0);
  for (size_t i = 0; i < tcubes.size(); ++i) ready[i] = cube_done[size_t(tcubes[i])];
  // Children have larger indices than their parents in every shape: fold from the back.
  for (size_t i = tcubes.size(); i-- > 1;) {
    const int up = shape[i];
    const int c = tcubes[i];
    const double sent = std::max(ready[i], group.link_free[size_t(c)]) + link_transfer<double>(hw.group.link, sbytes);
    group.link_free[size_t(c)] = sent;
    // The node's own merge unit (inter_cube = own_unit), or its CUBE reducer's units (shared).
    const double in = std::max(ready[size_t(up)], sent + link_latency<double>(hw.group.link));
    ready[size_t(up)] = shared_units ? Model::book(group.red_units[size_t(tcubes[size_t(up)])], in, merge) : in + merge;
  }
  const double normalise = double(normalise_cycles(hw.cube.reducer.lanes, uint64_t(t.rows()), uint64_t(d))) * m.cyc;
  return shared_units ? Model::book(group.red_units[size_t(tcubes[0])], ready[0], normalise) : ready[0] + normalise;
}

// Host (O return): O over the NoC to the host port, then the host link's chip-to-host direction
// (tiles one after another at its bandwidth, each landing host.latency_ns later; hw/chip/host.cpp).
// Returns when the tile's O has landed.
double host_o_return(const Model& m, const QTile& t, int d, double root_done, double& o_link_free) {
  const uint64_t obytes = o_tile_bytes(uint64_t(t.rows()), uint64_t(d));
  const double at_port = root_done + m.noc.time_ns(obytes);
  o_link_free = std::max(at_port, o_link_free) + host_transfer<double>(m.hw.host, obytes);
  return o_link_free + host_latency<double>(m.hw.host);
}

// Where one job's estimate is: the resources it shares and its critical path so far.
struct JobRun {
  const Model& m;
  const AttentionJob& job;
  const JobShape& shape;
  double launch, dma_start;
  std::vector<double>& host_free;
  double& o_link_free;
  GroupState& group;
  std::vector<double> slice_served, pass_ready;
  std::vector<int> pass_of_tile;
  TileScratch& scratch;
  int crit_pe = 0;
  double crit_end = -1, crit_local_end = 0;
};

// One Q tile of the job through every stage: Q delivery, each PE's local attention (the later of
// the compute path and the DMA path), the CUBE reducers, the reduction network, the O return.
void estimate_tile(JobRun& r, size_t ti) {
  const Model& m = r.m;
  const QTile& t = r.job.tiles[ti];
  const int d = r.job.head_dim, pes = m.hw.pes_per_group(), per_cube = m.hw.cube.pes;
  GroupState& g = r.group;
  TileScratch& s = r.scratch;
  std::vector<int>& tcubes = s.tcubes;
  tile_cubes(t, m.hw.group.cubes, per_cube, tcubes);
  std::vector<int>& tpes = s.tpes;
  tpes.clear();
  for (int p = 0; p < pes; ++p)
    if (tile_has_pe(t, p)) tpes.push_back(p);
  s.pe_free.clear();
  for (const auto& x : g.pe) s.pe_free.push_back(x.free);
  s.q_in_hand.assign(size_t(pes), 0.0);
  q_source_to_buffers(m, r.job, t, tcubes, r.launch, {r.host_free, g.qwrite_free, g.ports}, s.pe_free, s.q_in_hand);
  for (int p = 0; p < pes; ++p) r.slice_served[size_t(p)] += r.shape.slice_load[ti][size_t(p)];
  const double lockstep = r.job.kv_broadcast ? r.pass_ready[size_t(r.pass_of_tile[ti])] : 0.0;
  std::vector<double>& local_end = s.local_end;
  local_end.assign(size_t(pes), 0.0);
  for (int p : tpes) {
    PeTrack& x = g.pe[size_t(p)];
    const double q_in_hand = s.q_in_hand[size_t(p)];
    if (x.first_q < 0) x.first_q = q_in_hand;
    const JobShape::BlockList& list = r.shape.at(ti, p);
    const double c = pe_attention(m, r.job.kv_broadcast, list.blocks, x, std::max(q_in_hand, lockstep));
    x.gemm += list.alone_end;  // the compute term
    const BlockCost* last = list.blocks.empty() ? nullptr : &list.blocks.back();
    const double last_comp = last ? last->work.qk + last->work.softmax + last->work.pv : 0.0;
    // An owner's slice also serves remote readers (B2): it cannot finish before its load.
    local_end[size_t(p)] = std::max({c, r.dma_start + r.shape.write_ns[size_t(p)] + r.slice_served[size_t(p)] + last_comp,
                                     r.dma_start + r.shape.port_ns[size_t(p / per_cube)] + last_comp});
  }
  const double bus = reducer_bus(m.units, m.hw.cube.reducer, AttnState::wire_bytes(t.rows(), d));
  const double merge = m.merge_ns(t.rows(), d);
  std::vector<double>& cube_done = s.cube_done;
  cube_done.assign(size_t(m.hw.group.cubes), 0);
  for (int c : tcubes) cube_done[size_t(c)] = cube_reducer(m, t, c, tpes, local_end, g, bus, merge, s);
  const double root_done = reduction_network(m, t, d, tcubes, cube_done, g, merge, s);
  const double done = host_o_return(m, t, d, root_done, r.o_link_free);
  if (done > r.crit_end) {
    r.crit_end = done;
    r.crit_pe = tpes.back();
    r.crit_local_end = local_end[size_t(r.crit_pe)];
    for (int p : tpes)
      if (local_end[size_t(p)] >= r.crit_local_end) r.crit_local_end = local_end[size_t(p)], r.crit_pe = p;
  }
}

// The §4.5 terms along the critical path (the PE and tile that finish last).
PolicyEstimate critical_path_terms(const JobRun& r) {
  const PeTrack& x = r.group.pe[size_t(r.crit_pe)];
  PolicyEstimate e;
  e.q_ns = std::max(0.0, x.first_q);
  e.gemm_ns = x.gemm;
  // Only the part of the remap beyond Q delivery is on the critical path.
  e.remap_ns = r.job.remap ? std::max(0.0, r.dma_start - e.q_ns) : 0.0;
  e.reduce_ns = r.crit_end - r.crit_local_end;
  // KV transfer (and waits between tiles) not hidden behind the PE's compute.
  e.kv_ns = std::max(0.0, r.crit_local_end - (e.q_ns + e.remap_ns) - x.gemm);
  e.other_ns = r.crit_end - (e.q_ns + e.remap_ns + e.gemm_ns + e.kv_ns + e.reduce_ns);
  e.total_ns = r.crit_end;
  return e;
}

JobResult estimate_job(const Model& m, const AttentionJob& job, const JobShape& shape, const std::vector<AttentionJob>& jobs,
                       size_t ji, std::vector<double>& host_free, double& o_link_free, GroupState& group,
                       TileScratch& scratch) {
  const double launch = kernel_start_ns(jobs, ji, m.hw.host.kernel_launch_ns);
  const double dma_start = job.remap ? launch + shape.remap_copied + shape.remap_rebuild : launch;
  JobRun r{m, job, shape, launch, dma_start, host_free, o_link_free, group,
           std::vector<double>(size_t(m.hw.pes_per_group()), 0), {}, {}, scratch};
  for (size_t p = 0; p < group.pe.size(); ++p) {
    PeTrack& x = group.pe[p];
    x.dma = std::max(x.dma, dma_start) + shape.write_ns[p];
    for (double& s : x.slot_free) s = std::max(s, dma_start);
    x.first_q = -1;  // per-job attribution
    x.gemm = 0;
  }
  if (job.kv_broadcast) {
    r.pass_of_tile = broadcast_pass_of_tiles(job);  // the passes the simulator's KV mover serves
    r.pass_ready = kv_mover_pass_ready(m, job, launch, host_free, group, r.pass_of_tile);
  }
  for (size_t ti = 0; ti < job.tiles.size(); ++ti) estimate_tile(r, ti);
  JobResult res;
  res.end = r.crit_end;
  res.parts = critical_path_terms(r);
  return res;
}

PolicyEstimate estimate_with(const Model& m, const std::vector<AttentionJob>& jobs, Policy p) {
  const HwConfig& hw = m.hw;
  std::vector<double> host_free(1, 0.0);
  double o_link_free = 0;  // the host link's chip-to-host direction (its own resource: full duplex)
  PolicyEstimate best;
  best.policy = p;
  best.hbm_assumed = hbm_assumption(hw.pe.hbm);
  // Jobs' tiles share the host link in the Q source's round-robin order; approximating it
  // job by job keeps the estimate simple (the heads of a GQA step are alike). KV-broadcast
  // heads of one group run one after another (GroupState).
  std::map<int, GroupState> broadcast_groups;
  ShapeMemo shapes(m);
  TileScratch scratch;
  double end = -1;
  Activity activity;
  for (size_t j = 0; j < jobs.size(); ++j) {
    GroupState own = fresh_group(hw);
    GroupState& g = jobs[j].kv_broadcast ? broadcast_groups.emplace(jobs[j].group, fresh_group(hw)).first->second : own;
    const JobShape& shape = shapes.of(jobs[j]);
    activity += shape.activity;
    JobResult r = estimate_job(m, jobs[j], shape, jobs, j, host_free, o_link_free, g, scratch);
    if (r.end > end) {
      end = r.end;
      best = r.parts;
      best.policy = p;
      best.hbm_assumed = hbm_assumption(hw.pe.hbm);
    }
  }
  best.activity = activity;
  if (!jobs.empty()) {
    best.dynamic_j = total_of(dynamic_energy(activity, hw.energy, jobs.front().dtype));
    best.energy_j = best.dynamic_j + static_power_w(hw, 0) * std::max(0.0, best.total_ns) * 1e-9;
  }
  return best;
}

}  // namespace

PolicyEstimate estimate_policy(const std::vector<AttentionJob>& jobs, const HwConfig& hw, Policy p) {
  return estimate_policy(jobs, hw, p, noc_estimate(hw));
}

PolicyEstimate estimate_policy(const std::vector<AttentionJob>& jobs, const HwConfig& hw, Policy p,
                               const NocEstimate& noc) {
  return estimate_with(Model(hw, noc), jobs, p);
}

std::vector<PolicyEstimate> CostModel::estimate(const std::vector<Layout>& layouts,
                                                const std::function<const std::vector<AttentionJob>&(size_t)>& laid_out) {
  ++calls_;
  if (!noc_) noc_ = noc_estimate(hw_, nocs_, hw_file_);
  const Model m(hw_, *noc_);
  std::vector<PolicyEstimate> out;
  for (size_t i = 0; i < layouts.size(); ++i) out.push_back(estimate_with(m, laid_out(i), layouts[i].policy));
  return out;
}

}  // namespace ahbm
