#include "hw/common/contract/gemm_job.h"

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "hw/common/base/error.h"
#include "hw/common/base/timing.h"

namespace ahbm {

namespace {
// [begin, count) of part i of `total` cut into `parts`: the first total mod parts one larger.
std::pair<int, int> even_part(int total, int parts, int i) {
  const int base = total / parts, extra = total % parts;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

// The fused vector operators' inputs against the job's shape and every PE's blocks.
void check_fusion(const HwConfig& cfg, const GemmJob& job, const std::vector<GemmShard>& shards, const std::string& at) {
  const GemmFusion& f = job.fused;
  if (!f.epilogue()) return;
  const bool values = job.values();
  auto size = [&](const char* what, size_t got, size_t want) {
    if (got != want)
      throw InputError(at + ": " + what + " has " + std::to_string(got) + " values (allowed: " + std::to_string(want) + ")");
  };
  if (f.rms_norm && values) size("the norm weight", f.norm_weight.size(), size_t(job.k));
  if (f.residual && values) size("the residual", f.residual_values.size(), size_t(job.m) * size_t(job.n));
  if (f.residual && values && !f.residual_scale.empty()) size("the residual scale", f.residual_scale.size(), size_t(job.m));
  if (f.rope()) {
    size("rope_col", f.rope_col.size(), size_t(job.n));
    size("positions", f.positions.size(), size_t(job.m));
    if (f.head_dim < 2 || f.head_dim % 2 != 0)
      throw InputError(at + ": head_dim = " + std::to_string(f.head_dim) + " (allowed: an even number >= 2 for RoPE)");
  }
  // X-stationary: the receivers hold whole rows of X and sum a K-split themselves, so only the
  // Y blocks' columns matter, cut by the job's blocking.
  const bool xstat = job.x_stationary();
  const GemmBlocking xblk = xstat ? gemm_xstat_blocking(cfg, job, shards) : GemmBlocking{};
  for (size_t p = 0; p < shards.size(); ++p) {
    const GemmShard& s = shards[p];
    if (s.n_count == 0) continue;
    // The norm's row sums and the epilogues need the whole of K on the PE.
    if (!xstat && s.k_count != job.k)
      throw InputError(at + ": PE " + std::to_string(p) + " holds K rows [" + std::to_string(s.k_begin) + ", " +
                       std::to_string(s.k_begin + s.k_count) + ") of " + std::to_string(job.k) +
                       " (allowed with fused vector operators: the whole of K, no K-split)");
    const GemmBlocking blk = xstat ? xblk : gemm_blocking(cfg, job.m, s.k_count, s.n_count, job.dtype, job.write_back, job.op);
    for (int n0 = 0; n0 < s.n_count; n0 += blk.nb) {
      const int first = s.n_begin + n0, count = std::min(blk.nb, s.n_count - n0);
      if (f.gated_act && (first % 2 != 0 || count % 2 != 0))
        throw InputError(at + ": PE " + std::to_string(p) + " has a Y block of columns [" + std::to_string(first) + ", " +
                         std::to_string(first + count) + ") (allowed with a gated activation: whole gate, up pairs)");
      if (!f.rope()) continue;
      const int* rc = f.rope_col.data();
      const bool split_first = rc[first] >= 0 && rc[first] % 2 == 1;
      const bool split_last = rc[first + count - 1] >= 0 && rc[first + count - 1] % 2 == 0;
      if (split_first || split_last)
        throw InputError(at + ": PE " + std::to_string(p) + "'s Y block of columns [" + std::to_string(first) + ", " +
                         std::to_string(first + count) + ") splits a RoPE pair (allowed: both columns of a pair in one block)");
    }
  }
}

}  // namespace

GemmMapping gemm_mapping_from_name(const std::string& name, const std::string& field) {
  if (const std::optional<GemmMapping> m = find_choice<GemmMapping>(name)) return *m;
  throw InputError(field + " = '" + name + "' is not a GEMM mapping (allowed: " + choice_list<GemmMapping>() + ")");
}

std::vector<GemmShard> gemm_even_shards(int k, int n, int pes, int k_split) {
  std::vector<GemmShard> out(static_cast<size_t>(pes));
  const int columns = pes / k_split;
  for (int p = 0; p < columns * k_split; ++p) {
    const auto [nb, nc] = even_part(n, columns, p / k_split);
    const auto [kb, kc] = even_part(k, k_split, p % k_split);
    out[size_t(p)] = nc > 0 && kc > 0 ? GemmShard{nb, nc, kb, kc} : GemmShard{};
  }
  return out;
}

std::vector<GemmShard> gemm_shards_of(const GemmJob& j, int pes) {
  return j.shards.empty() ? gemm_even_shards(j.k, j.n, pes, j.k_split) : j.shards;
}

GemmBlocking gemm_block_bytes(const HwConfig& cfg, int mb, int kb, int nb, DType t, bool write_back, int x_k) {
  const uint64_t b = dtype_bytes(t), y = uint64_t(mb) * uint64_t(nb) * 4;
  GemmBlocking g;
  g.mb = mb;
  g.kb = kb;
  g.nb = nb;
  g.slot_bytes = std::max(uint64_t(kb) * uint64_t(nb) * b, write_back ? y : 0);
  g.sram_bytes = uint64_t(cfg.pe.dma.buffers) * g.slot_bytes + y + uint64_t(mb) * uint64_t(x_k > 0 ? x_k : kb) * b;
  g.q_bytes = x_k > 0 ? 0 : 2 * uint64_t(mb) * uint64_t(kb) * b;
  return g;
}

namespace {
// The search of gemm_blocking (its comment); x_k > 0: the X-stationary capacities.
GemmBlocking search_blocking(const HwConfig& cfg, int m, int k_p, int n_p, DType t, bool write_back, const std::string& op,
                             int x_k) {
  const GemmConfig& e = cfg.pe.gemm;
  auto fits = [&](const GemmBlocking& g) { return g.sram_bytes <= cfg.pe.sram_bytes && g.q_bytes <= cfg.cube.q_buffer.bytes; };
  // Candidates of a block edge: the whole extent, then multiples of the engine tile below it.
  auto candidates = [](int whole, int tile) {
    std::vector<int> c{whole};
    for (int v = (whole - 1) / tile * tile; v >= tile; v -= tile) c.push_back(v);
    return c;
  };
  const std::vector<int> ms = candidates(m, e.tile_m), ks = candidates(k_p, e.tile_k);
  const auto fits_kb = [&](int mb, int kb, int nb) { return fits(gemm_block_bytes(cfg, mb, kb, nb, t, write_back, x_k)); };
  for (int nb : candidates(n_p, e.tile_n))
    for (int mb : ms) {
      // The SRAM and Q-buffer bytes never shrink as Kb grows (gemm_block_bytes), so along `ks`
      // (descending) the Kbs that fit follow the ones that do not: the first (largest) that fits
      // is found by bisection, the answer a scan from the front gives. (A scan was ~35 % of a
      // whole-model serve run: thousands of Kb candidates for each Mb of a long prefill.)
      if (!fits_kb(mb, ks.back(), nb)) continue;
      const auto kb = std::partition_point(ks.begin(), ks.end(), [&](int k) { return !fits_kb(mb, k, nb); });
      return gemm_block_bytes(cfg, mb, *kb, nb, t, write_back, x_k);
    }
  const GemmBlocking least = gemm_block_bytes(cfg, ms.back(), ks.back(), candidates(n_p, e.tile_n).back(), t, write_back, x_k);
  throw InputError("pe.sram_bytes = " + std::to_string(cfg.pe.sram_bytes) + " with pe.dma.buffers = " +
                   std::to_string(cfg.pe.dma.buffers) + " and cube.q_buffer.bytes = " +
                   std::to_string(cfg.cube.q_buffer.bytes) + " cannot hold the smallest block of " + op + " (" +
                   std::to_string(m) + " x " + std::to_string(k_p) + " x " + std::to_string(n_p) + " per PE, " +
                   dtype_name(t) + "): Mb = " + std::to_string(least.mb) + ", Kb = " + std::to_string(least.kb) +
                   ", Nb = " + std::to_string(least.nb) + " needs " + std::to_string(least.sram_bytes) +
                   " bytes of SRAM (buffers x slot " + std::to_string(least.slot_bytes) +
                   " + accumulators + X block) and " + std::to_string(least.q_bytes) +
                   " bytes of Q buffer (allowed: at most pe.sram_bytes and cube.q_buffer.bytes)" +
                   (x_k > 0 ? std::string(" in the x_stationary mapping (X rows of K = ") + std::to_string(x_k) + " held whole)" : ""));
}
}  // namespace

GemmBlocking gemm_blocking(const HwConfig& cfg, int m, int k_p, int n_p, DType t, bool write_back, const std::string& op) {
  return search_blocking(cfg, m, k_p, n_p, t, write_back, op, 0);
}

std::vector<std::pair<int, int>> gemm_xstat_rows(int m, const std::vector<GemmShard>& shards) {
  std::vector<std::pair<int, int>> out(shards.size(), {0, 0});
  const int r = int(std::count_if(shards.begin(), shards.end(), [](const GemmShard& s) { return s.n_count > 0; }));
  int i = 0;
  for (size_t p = 0; p < shards.size(); ++p)
    if (shards[p].n_count > 0) out[p] = even_part(m, r, i++);
  return out;
}

GemmBlocking gemm_xstat_blocking(const HwConfig& cfg, const GemmJob& j, const std::vector<GemmShard>& shards) {
  int rows = 0, k_p = 0, n_p = 0;
  for (const auto& [begin, count] : gemm_xstat_rows(j.m, shards)) rows = std::max(rows, count);
  for (const GemmShard& s : shards)
    if (s.n_count > 0) k_p = std::max(k_p, s.k_count), n_p = std::max(n_p, s.n_count);
  return search_blocking(cfg, rows, k_p, n_p, j.dtype, j.write_back, j.op, j.k);
}

std::vector<GemmColumns> gemm_column_groups(const std::vector<GemmShard>& shards) {
  std::vector<GemmColumns> out;
  for (size_t p = 0; p < shards.size(); ++p) {
    const GemmShard& s = shards[p];
    if (s.n_count == 0) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const GemmColumns& c) { return c.n_begin == s.n_begin && c.n_count == s.n_count; });
    if (it == out.end()) it = out.insert(out.end(), GemmColumns{s.n_begin, s.n_count, {}});
    it->holders.push_back(int(p));
  }
  std::sort(out.begin(), out.end(), [](const GemmColumns& a, const GemmColumns& b) { return a.n_begin < b.n_begin; });
  for (GemmColumns& c : out)
    std::stable_sort(c.holders.begin(), c.holders.end(),
                     [&](int a, int b) { return shards[size_t(a)].k_begin < shards[size_t(b)].k_begin; });
  return out;
}

void check_gemm_jobs(const HwConfig& cfg, const std::vector<GemmJob>& jobs, const std::string& where) {
  const int pes = cfg.groups * cfg.pes_per_group();
  for (size_t j = 0; j < jobs.size(); ++j) {
    const GemmJob& job = jobs[j];
    const std::string at = where + ": GEMM " + std::to_string(j) + " (" + job.op + ")";
    auto range = [&](const char* field, int64_t v, int64_t lo, int64_t hi) {
      if (v < lo || v > hi)
        throw InputError(at + ": " + field + " = " + std::to_string(v) + " is out of range (allowed: [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "])");
    };
    range("m", job.m, 1, 1 << 24);
    range("k", job.k, 1, 1 << 24);
    range("n", job.n, 1, 1 << 24);
    range("k_split", job.k_split, 1, std::min(pes, job.k));
    if (!job.shards.empty() && int(job.shards.size()) != pes)
      throw InputError(at + ": " + std::to_string(job.shards.size()) + " shards for " + std::to_string(pes) +
                       " PEs (groups x pes per group)");
    if (job.values() && (job.x.size() != size_t(job.m) * size_t(job.k) || job.w.size() != size_t(job.k) * size_t(job.n)))
      throw InputError(at + ": X or W has the wrong size for " + std::to_string(job.m) + " x " + std::to_string(job.k) +
                       " x " + std::to_string(job.n));
    // Every (column, K row) of W must be held exactly once, so Y is complete.
    const std::vector<GemmShard> shards = gemm_shards_of(job, pes);
    uint64_t covered = 0;
    for (size_t p = 0; p < shards.size(); ++p) {
      const GemmShard& s = shards[p];
      if (s.n_count == 0) continue;
      if (s.n_begin < 0 || s.n_count < 0 || s.n_begin + s.n_count > job.n || s.k_begin < 0 || s.k_count <= 0 ||
          s.k_begin + s.k_count > job.k)
        throw InputError(at + ": shard of PE " + std::to_string(p) + " lies outside the " + std::to_string(job.k) +
                         " x " + std::to_string(job.n) + " weight");
      covered += uint64_t(s.n_count) * uint64_t(s.k_count);
      if (!job.x_stationary()) gemm_blocking(cfg, job.m, s.k_count, s.n_count, job.dtype, job.write_back, job.op);
    }
    if (job.mapping != jobs.front().mapping)
      throw InputError(at + ": mapping " + choice_name(job.mapping) + " after " + choice_name(jobs.front().mapping) +
                       " (allowed: one GEMM mapping per run)");
    if (job.x_stationary()) {
      gemm_xstat_blocking(cfg, job, shards);
      // Each receiver sums a column group's K parts: they must be disjoint and cover K.
      for (const GemmColumns& c : gemm_column_groups(shards)) {
        int next = 0;
        for (int h : c.holders) {
          const GemmShard& s = shards[size_t(h)];
          if (s.k_begin != next)
            throw InputError(at + ": the shards of columns [" + std::to_string(c.n_begin) + ", " +
                             std::to_string(c.n_begin + c.n_count) + ") hold K rows from " + std::to_string(s.k_begin) +
                             " after " + std::to_string(next) + " (allowed in x_stationary: K parts that follow each other)");
          next += s.k_count;
        }
        if (next != job.k)
          throw InputError(at + ": the shards of columns [" + std::to_string(c.n_begin) + ", " +
                           std::to_string(c.n_begin + c.n_count) + ") hold K rows [0, " + std::to_string(next) +
                           ") of " + std::to_string(job.k) + " (allowed in x_stationary: all of K)");
      }
    }
    check_fusion(cfg, job, shards, at);
    if (covered != uint64_t(job.k) * uint64_t(job.n))
      throw InputError(at + ": the shards hold " + std::to_string(covered) + " of the " +
                       std::to_string(uint64_t(job.k) * uint64_t(job.n)) + " weights");
  }
  // W and Y of every job must fit each PE's slice.
  const auto plans = gemm_pe_plans(cfg, jobs);
  for (int p = 0; p < pes; ++p) {
    uint64_t end = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
      const GemmPePlan& pl = plans[j][size_t(p)];
      if (jobs[j].x_stationary()) {
        if (pl.receives())
          end = std::max(end, pl.x_base + uint64_t(pl.row_count) * uint64_t(jobs[j].k) * jobs[j].elem_bytes());
        if (pl.active()) end = std::max(end, pl.w_base + uint64_t(pl.shard.k_count) * uint64_t(pl.shard.n_count) * jobs[j].elem_bytes());
      } else if (pl.active()) {
        end = std::max(end, std::max(pl.y_base, pl.r_base) + uint64_t(jobs[j].m) * uint64_t(pl.shard.n_count) * 4);
      }
    }
    if (end > cfg.pe.hbm.capacity_bytes)
      throw InputError(where + ": pe.hbm.capacity_bytes = " + std::to_string(cfg.pe.hbm.capacity_bytes) +
                       " is exceeded on chip PE " + std::to_string(p) + " (the GEMMs' W shards, Y and residual rows need " +
                       std::to_string(end) + " bytes)");
  }
}

std::vector<std::vector<GemmPePlan>> gemm_pe_plans(const HwConfig& cfg, const std::vector<GemmJob>& jobs) {
  const int pes = cfg.groups * cfg.pes_per_group();
  std::vector<std::vector<GemmPePlan>> out(jobs.size(), std::vector<GemmPePlan>(size_t(pes)));
  std::vector<uint64_t> used(size_t(pes), 0);
  for (size_t j = 0; j < jobs.size(); ++j) {
    const GemmJob& job = jobs[j];
    const std::vector<GemmShard> shards = gemm_shards_of(job, pes);
    const bool xstat = job.x_stationary();
    const GemmBlocking xblk = xstat ? gemm_xstat_blocking(cfg, job, shards) : GemmBlocking{};
    const std::vector<std::pair<int, int>> rows = xstat ? gemm_xstat_rows(job.m, shards) : std::vector<std::pair<int, int>>{};
    for (int p = 0; p < pes; ++p) {
      GemmPePlan& pl = out[j][size_t(p)];
      pl.shard = shards[size_t(p)];
      if (xstat) {
        pl.blk = xblk;
        std::tie(pl.row_begin, pl.row_count) = rows[size_t(p)];
      }
    }
    // w_stationary: one blocking per reduction group (the PEs with the same columns; a K-split),
    // from its largest K part, so the partial Y blocks of its holders line up.
    if (!xstat)
      for (const GemmColumns& c : gemm_column_groups(shards)) {
        int k_p = 0;
        for (int h : c.holders) k_p = std::max(k_p, shards[size_t(h)].k_count);
        const GemmBlocking blk = gemm_blocking(cfg, job.m, k_p, c.n_count, job.dtype, job.write_back, job.op);
        for (size_t r = 0; r < c.holders.size(); ++r) {
          GemmPePlan& pl = out[j][size_t(c.holders[r])];
          pl.blk = blk;
          pl.k_rank = int(r);
          pl.owner = r > 0 ? c.holders[0] : -1;
          pl.partials = r > 0 ? 0 : int(c.holders.size()) - 1;
        }
      }
    for (int p = 0; p < pes; ++p) {
      GemmPePlan& pl = out[j][size_t(p)];
      if (!pl.active()) continue;
      pl.w_base = used[size_t(p)];
      used[size_t(p)] += uint64_t(pl.shard.k_count) * uint64_t(pl.shard.n_count) * job.elem_bytes();
    }
  }
  // Y rows, then residual rows: a column shard of every row (w_stationary) or every column of
  // the PE's rows (x_stationary).
  auto y_bytes = [&](size_t j, const GemmPePlan& pl) {
    return jobs[j].x_stationary() ? uint64_t(pl.row_count) * uint64_t(jobs[j].n) * 4
                                  : uint64_t(jobs[j].m) * uint64_t(pl.shard.n_count) * 4;
  };
  auto holds_y = [&](size_t j, const GemmPePlan& pl) { return jobs[j].x_stationary() ? pl.receives() : pl.active(); };
  for (size_t j = 0; j < jobs.size(); ++j)
    for (int p = 0; p < pes; ++p) {
      GemmPePlan& pl = out[j][size_t(p)];
      if (!holds_y(j, pl)) continue;
      pl.y_base = used[size_t(p)];
      used[size_t(p)] += y_bytes(j, pl);
    }
  for (size_t j = 0; j < jobs.size(); ++j)
    for (int p = 0; p < pes; ++p) {
      GemmPePlan& pl = out[j][size_t(p)];
      if (!holds_y(j, pl) || !jobs[j].fused.residual) continue;
      pl.r_base = used[size_t(p)];
      used[size_t(p)] += y_bytes(j, pl);
    }
  // X-stationary: the PE's X rows (where the previous operator left them).
  for (size_t j = 0; j < jobs.size(); ++j)
    for (int p = 0; p < pes; ++p) {
      GemmPePlan& pl = out[j][size_t(p)];
      if (!jobs[j].x_stationary() || !pl.receives()) continue;
      pl.x_base = used[size_t(p)];
      used[size_t(p)] += uint64_t(pl.row_count) * uint64_t(jobs[j].k) * jobs[j].elem_bytes();
    }
  return out;
}

uint64_t gemm_y_blocks(const GemmJob& j, const GemmPePlan& pl, const std::vector<GemmColumns>& columns) {
  if (!j.x_stationary()) return pl.active() ? uint64_t(pl.m_blocks(j.m)) * uint64_t(pl.n_blocks()) : 0;
  uint64_t n_blocks = 0;
  for (const GemmColumns& c : columns) n_blocks += uint64_t(GemmPePlan::ceil_div_i(c.n_count, pl.blk.nb));
  return uint64_t(pl.row_blocks()) * n_blocks;
}

std::vector<GemmXChunk> gemm_x_chunks(const HwConfig& cfg, const std::vector<GemmJob>& jobs,
                                      const std::vector<std::vector<GemmPePlan>>& plans) {
  std::vector<GemmXChunk> out;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const GemmJob& job = jobs[j];
    if (job.x_stationary()) continue;  // its X rows are in the PEs' own slices
    std::set<int> ends, cubes;
    for (size_t p = 0; p < plans[j].size(); ++p) {
      const GemmPePlan& pl = plans[j][p];
      if (!pl.active()) continue;
      cubes.insert(int(p) / cfg.cube.pes);  // chip PE g·ppg + c·pes + i → chip CUBE g·cubes + c
      for (int e = pl.blk.mb; e < job.m; e += pl.blk.mb) ends.insert(e);
    }
    if (cubes.empty()) continue;
    ends.insert(job.m);
    // At most what a Q buffer holds (whole rows, at least one): a chunk is written only once all
    // of it has arrived, so one chunk of a large M would hold the PEs back by its whole write.
    const uint64_t row_bytes = uint64_t(job.k) * job.elem_bytes();
    const int most = int(std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(job.m), cfg.cube.q_buffer.bytes / row_bytes)));
    int begin = 0;
    for (int e : ends)
      for (; begin < e;) {
        const int end = std::min(e, begin + most);
        out.push_back({int(j), begin, end, uint64_t(end - begin) * row_bytes, std::vector<int>(cubes.begin(), cubes.end())});
        begin = end;
      }
  }
  return out;
}

size_t gemm_x_chunk_of(const std::vector<GemmXChunk>& chunks, int j, int row) {
  const auto it = std::find_if(chunks.begin(), chunks.end(),
                               [&](const GemmXChunk& c) { return c.job == j && row >= c.row_begin && row < c.row_end; });
  if (it == chunks.end())
    throw std::logic_error("gemm_x_chunk_of: job " + std::to_string(j) + " has no X chunk with row " + std::to_string(row));
  return size_t(it - chunks.begin());
}

double x_ready_ns(const HwConfig& cfg, const std::vector<GemmJob>& jobs, size_t j, int row, double noc_latency_ns) {
  const std::vector<GemmXChunk> chunks = gemm_x_chunks(cfg, jobs, gemm_pe_plans(cfg, jobs));
  const size_t last = gemm_x_chunk_of(chunks, int(j), row);
  // Summed in sc_time (picoseconds), as the simulation advances.
  const Clock clock(cfg.clock_ghz);
  sc_core::sc_time host = sc_core::SC_ZERO_TIME, ready = sc_core::SC_ZERO_TIME;
  for (size_t c = 0; c <= last; ++c) {
    host += sc_core::sc_time(cfg.host.latency_ns, sc_core::SC_NS) + transfer_time(chunks[c].bytes, cfg.host.bandwidth_gbps);
    const sc_core::sc_time arrive = host + sc_core::sc_time(noc_latency_ns, sc_core::SC_NS);
    ready = std::max(arrive, ready) + clock.cycles(ceil_div(chunks[c].bytes, uint64_t(cfg.cube.q_buffer.write_bytes_per_cycle)));
  }
  return to_ns(ready);
}

uint64_t gemm_reduce_cycles(const VectorConfig& v, int mb, int nb, int partials) {
  return vector_pass_cycles(v, mul_sat(mul_sat(uint64_t(mb), uint64_t(nb)), uint64_t(partials)), 1);
}

uint64_t gemm_reduce_cycles(const HwConfig& cfg, int mb, int nb, int partials) {
  return gemm_reduce_cycles(cfg.pe.vector, mb, nb, partials);
}

}  // namespace ahbm
