#include "runtime/plan/planner.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "hw/common/base/error.h"
#include "hw/common/base/timing.h"
#include "hw/pe/sram_budget.h"

namespace ahbm {

namespace {

// Largest Q tile (a multiple of the GEMM tile_m, or all rows) that fits the Q buffer and SRAM
// at `elem` bytes per Q/K/V element; 0 when not even one GEMM tile of rows fits.
int fitting_rows(const HwConfig& hw, int rows, int head_dim, uint64_t elem) {
  auto fits = [&](int r) {
    return sram_budget(hw.pe, uint64_t(r), uint64_t(head_dim), elem).total() <= hw.pe.sram_bytes &&
           uint64_t(r) * uint64_t(head_dim) * elem <= hw.cube.q_buffer.bytes;
  };
  if (fits(rows)) return rows;
  const int step = hw.pe.gemm.tile_m;
  for (int r = (rows / step) * step; r >= step; r -= step)
    if (fits(r)) return r;
  return 0;
}

// As few tiles of at most `max_rows` as cover `rows`, sized evenly (multiples of `align`): the
// rows of each but the last.
int even_tile_rows(int rows, int max_rows, int align) {
  if (rows <= max_rows) return std::max(rows, 1);
  const int n = int(ceil_div(uint64_t(rows), uint64_t(max_rows)));
  const int even = int(ceil_div(ceil_div(uint64_t(rows), uint64_t(n)), uint64_t(align)) * uint64_t(align));
  return std::min(max_rows, even);
}

std::vector<QTile> cut_q_tiles(int rows, int tile_rows) {
  std::vector<QTile> tiles;
  for (int b = 0; b < rows; b += tile_rows) tiles.push_back({b, std::min(rows, b + tile_rows)});
  return tiles;
}

}  // namespace

int q_tile_rows(const HwConfig& hw, int fixed_rows, int64_t rows_in, int head_dim, uint64_t elem_bytes) {
  if (fixed_rows > 0) return int(std::min<int64_t>(fixed_rows, rows_in));
  const int rows = int(std::min<int64_t>(rows_in, 1 << 30));
  const int max_rows = fitting_rows(hw, rows, head_dim, elem_bytes);
  return max_rows > 0 ? even_tile_rows(rows, max_rows, hw.pe.gemm.tile_m) : 0;
}

std::vector<Candidate> layout_candidates(const HwConfig& hw, const AttentionJob& a, int fixed_rows) {
  const int rows = a.row_count();
  // Largest tile rows (<= want) that fit the PE SRAM and the Q buffer.
  std::string no_fit;
  const auto fitting = [&](int want) {
    if (fixed_rows > 0) return std::min(want, fixed_rows);
    const int r = fitting_rows(hw, want, a.head_dim, a.elem_bytes());
    if (r == 0)
      no_fit = "no Q tile fits: even " + std::to_string(hw.pe.gemm.tile_m) +
               " rows (pe.gemm.tile_m) exceed pe.sram_bytes or cube.q_buffer.bytes";
    return r;
  };
  const auto ceil_rows = [&](int parts) { return int(ceil_div(uint64_t(rows), uint64_t(parts))); };
  std::vector<Candidate> out;
  out.push_back({{Policy::A, a.tiles.empty() ? 0 : a.tiles.front().rows()}, ""});
  if (rows == 0) {  // nothing to lay out: every policy runs the empty job as it is
    for (Policy p : all_policies())
      if (p != Policy::A) out.push_back({{p, 0}, ""});
    return out;
  }
  // One Q group per CUBE (B1..B4): ceil(rows / cubes) rows, cut further if they do not fit.
  const int per_cube = fitting(ceil_rows(hw.group.cubes));
  const std::string cube_error = no_fit;
  for (Policy p : {Policy::B1, Policy::B2, Policy::B3, Policy::B4}) out.push_back({{p, per_cube}, cube_error});
  // B5: ceil(rows / PEs) rows per PE (only where a CUBE's group fits, as it always did).
  const int per_pe = cube_error.empty() ? fitting(ceil_rows(hw.pes_per_group())) : 0;
  out.push_back({{Policy::B5, per_pe}, cube_error.empty() ? no_fit : cube_error});
  if (fixed_rows > 0 || hw.q_tile_search != QTileSearch::cost_model) return out;
  // The search: after each policy's largest tile, its smaller ones (runtime/plan/planner.h).
  std::vector<Candidate> searched;
  for (const Candidate& c : out) {
    searched.push_back(c);
    if (!c.unavailable.empty()) continue;
    for (int t : smaller_tiles(c.layout.tile_rows, hw.pe.gemm.tile_m)) searched.push_back({{c.layout.policy, t}, ""});
  }
  return searched;
}

std::vector<int> smaller_tiles(int largest, int align) {
  // Tile rows for n = 2, 3, ... tiles of `largest` rows spread evenly, each rounded up to a
  // multiple of `align` (whole GEMM tiles); n grows by at least a quarter each time so that the
  // list stays logarithmic in largest / align. Distinct, strictly decreasing, >= align.
  std::vector<int> out;
  if (align < 1 || largest <= align) return out;
  for (int n = 2;; n = std::max(n + 1, n + n / 4)) {
    const int t = int(ceil_div(ceil_div(uint64_t(largest), uint64_t(n)), uint64_t(align)) * uint64_t(align));
    if (t < largest && (out.empty() || t < out.back())) out.push_back(t);
    if (t <= align) break;
  }
  return out;
}

Layout layout_of(const HwConfig& hw, const AttentionJob& a, Policy p) {
  for (const Candidate& c : layout_candidates(hw, a, hw.q_tile_rows))
    if (c.layout.policy == p) {
      if (!c.unavailable.empty()) throw InputError(c.unavailable);
      return c.layout;
    }
  throw std::logic_error("layout_of: no candidate for policy " + policy_name(p));
}

AttentionJob policy_job(const AttentionJob& a, const HwConfig& hw, Policy p) {
  return apply_policy(a, hw, layout_of(hw, a, p));
}

namespace {

// Writes the K and V rows (rounded to the storage type) of (KV head, owner, position).
using KvRowFn = std::function<void(int head, int owner, int32_t pos, float* k, float* v)>;

// The KV side of a step's job set, the same for every KV head of the step (only the values
// differ): per PE the tokens it holds, with their visibility and tensor owner. Built once per
// job set, not once per KV head.
struct KvLayout {
  std::vector<KvShard> shards;                 // info and tokens; no values
  std::vector<std::vector<int>> shard_origin;  // per PE, per token: tensor owner of its K/V
  std::vector<std::vector<KvWrite>> writes;    // per PE: what the step writes (empty: none)
};

// The KV writes of `page`, whose tokens start at shard token `base` of its PE, for a step that
// began at write count `since`: the copy that made the page (when made in this step), then its
// tokens appended in this step (a run adjacent to the PE's previous append run extends it).
void add_page_writes(const KvPage& page, int base, uint64_t since, std::vector<KvWrite>& out) {
  if (since == kNoKvWrites) return;
  if (page.copied > 0 && page.written_at[0] > since) out.push_back({base, page.copied, page.copied_from_pe});
  for (int t = page.copied; t < page.filled(); ++t) {
    if (page.written_at[size_t(t)] <= since) continue;
    if (!out.empty() && !out.back().copy() && out.back().first + out.back().count == base + t) ++out.back().count;
    else out.push_back({base + t, 1, -1});
  }
}

KvLayout kv_layout(const HwConfig& hw, const KvPageManager& kv, const Step& step, const std::vector<int>& subset) {
  // Every page any job agent references, in first-reference order, with who references it.
  std::vector<PageId> order;
  std::map<PageId, std::vector<int>> refs;
  for (size_t i = 0; i < subset.size(); ++i) {
    const StepAgent& a = step.agents[size_t(subset[i])];
    for (PageId p : kv.table(a.seq)) {
      auto& r = refs[p];
      if (r.empty()) order.push_back(p);
      r.push_back(int(i));
    }
  }
  const int pes = hw.pes_per_group();
  if (kv.pes() != pes) throw std::logic_error("page manager and hardware disagree on PEs per group");
  KvLayout out;
  out.shards.resize(size_t(pes));
  out.shard_origin.assign(size_t(pes), {});
  if (step.kv_since != kNoKvWrites) out.writes.assign(size_t(pes), {});
  std::vector<size_t> tokens(size_t(pes), 0);
  for (PageId id : order) tokens[size_t(kv.page(id).pe)] += size_t(kv.page(id).filled());
  for (int p = 0; p < pes; ++p) {
    out.shards[size_t(p)].info.reserve(tokens[size_t(p)]);
    out.shard_origin[size_t(p)].reserve(tokens[size_t(p)]);
  }
  for (PageId id : order) {
    const std::vector<int>& r = refs[id];
    int owner = kSharedOwner;
    if (r.size() != subset.size()) {
      if (r.size() != 1)
        throw InputError("step " + step.label() + ": a KV page is shared by " + std::to_string(r.size()) + " of " +
                         std::to_string(subset.size()) + " agents; only fully shared or private pages are supported");
      owner = r[0];
    }
    const KvPage& page = kv.page(id);
    KvShard& s = out.shards[size_t(page.pe)];
    if (!out.writes.empty()) add_page_writes(page, s.tokens, step.kv_since, out.writes[size_t(page.pe)]);
    for (int t = 0; t < page.filled(); ++t) {
      s.info.push_back({owner, page.first_pos + t});
      out.shard_origin[size_t(page.pe)].push_back(page.origin[size_t(t)]);
      ++s.tokens;
    }
  }
  return out;
}

// `values` null: timing only. `fixed_rows` > 0: Q tiles of that many rows (q_tile_rows).
AttentionJob make_job(const Scenario& sc, const HwConfig& hw, const KvLayout& layout, const Step& step,
                      const std::vector<int>& subset, int kv_head, uint64_t seed, const KvRowFn* values,
                      int fixed_rows, JobMeta& meta) {
  const int d = sc.model.head_dim, qpk = sc.model.q_per_kv();
  AttentionJob job;
  job.phase = phase_name(step.phase);
  job.group = kv_head % hw.groups;
  job.head_dim = d;
  job.dtype = sc.model.dtype;
  job.scale = float(1.0 / std::sqrt(double(d)));
  job.values = values != nullptr;
  meta.kv_head = kv_head;
  meta.step_agents = subset;

  for (size_t i = 0; i < subset.size(); ++i) {
    const StepAgent& a = step.agents[size_t(subset[i])];
    job.agents.push_back(a.name);
    for (int j = 0; j < qpk; ++j) {
      const int q_head = kv_head * qpk + j;
      for (int t = 0; t < a.new_tokens; ++t) {
        const int32_t pos = a.length - a.new_tokens + t;
        job.rows.push_back({int(i), pos});
        meta.row_origin.push_back(a.origin);
        meta.row_q_head.push_back(q_head);
        if (values) {
          job.q.resize(job.q.size() + size_t(d));
          float* q = job.q.data() + job.q.size() - size_t(d);
          tensor_row(seed, TensorKind::q, q_head, a.origin, pos, d, q);
          for (int c = 0; c < d; ++c) q[c] = round_to(job.dtype, q[c]);
        }
      }
    }
  }

  job.shards = layout.shards;
  job.kv_writes = layout.writes;
  meta.shard_origin = layout.shard_origin;
  if (values)
    for (size_t p = 0; p < job.shards.size(); ++p) {
      KvShard& s = job.shards[p];
      s.k.resize(size_t(s.tokens) * size_t(d));
      s.v.resize(size_t(s.tokens) * size_t(d));
      for (int t = 0; t < s.tokens; ++t)
        (*values)(kv_head, meta.shard_origin[p][size_t(t)], s.info[size_t(t)].pos, s.k.data() + size_t(t) * size_t(d),
                  s.v.data() + size_t(t) * size_t(d));
    }

  const int rows = job.row_count();
  const int tile_rows = q_tile_rows(hw, fixed_rows, rows, d, job.elem_bytes());
  if (tile_rows == 0 && fixed_rows <= 0)
    throw InputError("no Q tile fits: even " + std::to_string(hw.pe.gemm.tile_m) + " rows (pe.gemm.tile_m) of " +
                     dtype_name(job.dtype) + " exceed pe.sram_bytes = " + std::to_string(hw.pe.sram_bytes) +
                     " or cube.q_buffer.bytes = " + std::to_string(hw.cube.q_buffer.bytes) + " (" +
                     sram_budget(hw.pe, uint64_t(hw.pe.gemm.tile_m), uint64_t(d), job.elem_bytes()).describe() +
                     ")");
  job.tiles = cut_q_tiles(rows, tile_rows);
  return job;
}

// The job set of `only` (>= 0) or every agent of the step, with its layout candidates.
Plan plan_rows(const Scenario& sc, const HwConfig& hw, const KvPageManager& kv, const Step& step, uint64_t seed,
               const KvRowFn* values, int only, int fixed_rows) {
  Plan plan;
  std::vector<int> subset;
  for (int i = 0; i < int(step.agents.size()); ++i)
    if (only < 0 || i == only) subset.push_back(i);
  const KvLayout layout = kv_layout(hw, kv, step, subset);
  for (int h = 0; h < sc.model.num_kv_heads; ++h) {
    plan.meta.emplace_back();
    plan.jobs.push_back(make_job(sc, hw, layout, step, subset, h, seed, values, fixed_rows, plan.meta.back()));
  }
  for (int i : subset) plan.rows_per_kv_head += step.agents[size_t(i)].new_tokens * sc.model.q_per_kv();
  // Every job of the step has the same rows, head dim and storage type: one set of candidates.
  if (!plan.jobs.empty()) plan.candidates = layout_candidates(hw, plan.jobs.front(), fixed_rows);
  return plan;
}

}  // namespace

Planner::Planner(const Scenario& sc, const HwConfig& hw, uint64_t seed, KvValues* values)
    : sc_(sc), hw_(hw), seed_(seed), values_(values) {}

Plan Planner::plan(const KvPageManager& kv, const Step& step, const JobSet& set) {
  ++calls_;
  const int d = sc_.model.head_dim;
  KvValues* values = set.timing_only ? nullptr : values_;
  const KvRowFn cached = [values, d](int head, int owner, int32_t pos, float* k, float* v) {
    const KvValues::Row row = values->row(head, owner, pos);
    std::copy(row.k, row.k + d, k);
    std::copy(row.v, row.v + d, v);
  };
  const int fixed = set.q_tile_rows > 0 ? set.q_tile_rows : hw_.q_tile_rows;
  return plan_rows(sc_, hw_, kv, step, seed_, values ? &cached : nullptr, set.only, fixed);
}

int Planner::tile_rows(int64_t rows) const {
  return q_tile_rows(hw_, hw_.q_tile_rows, rows, sc_.model.head_dim, dtype_bytes(sc_.model.dtype));
}

Plan plan_fanout(const Scenario& sc_in, const HwConfig& hw, uint64_t seed, bool values) {
  Scenario sc = sc_in;
  std::vector<PhaseSpec> upto;
  for (const PhaseSpec& p : sc.phases)
    if (p.type == PhaseType::prefill || p.type == PhaseType::fanout) upto.push_back(p);
  sc.phases = upto;
  KvPageManager kv(hw.pes_per_group(), -1, sc.kv.page_tokens);
  // One step reads each token once: generate K/V straight into the shards rather than through a
  // KvValues cache (which would hold every row twice more), so memory is the job's tensors.
  const int d = sc.model.head_dim;
  const DType t = sc.model.dtype;
  const KvRowFn direct = [seed, d, t](int head, int owner, int32_t pos, float* k, float* v) {
    tensor_row(seed, TensorKind::k, head, owner, pos, d, k);
    tensor_row(seed, TensorKind::v, head, owner, pos, d, v);
    for (int i = 0; i < d; ++i) {
      k[i] = round_to(t, k[i]);
      v[i] = round_to(t, v[i]);
    }
  };
  Plan plan;
  AgentSession(sc, kv).run([&](const Step& step) {
    if (step.phase == PhaseType::fanout) plan = plan_rows(sc, hw, kv, step, seed, values ? &direct : nullptr, -1, hw.q_tile_rows);
  });
  return plan;
}

FlatKv flatten_kv(const AttentionJob& job) {
  FlatKv f;
  for (const KvShard& s : job.shards) {
    f.k.insert(f.k.end(), s.k.begin(), s.k.end());
    f.v.insert(f.v.end(), s.v.begin(), s.v.end());
    f.info.insert(f.info.end(), s.info.begin(), s.info.end());
  }
  return f;
}

FlatKv flatten_kv_exact(const AttentionJob& job, const JobMeta& meta, KvValues& values) {
  FlatKv f;
  const int d = job.head_dim;
  size_t tokens = 0;
  for (const KvShard& s : job.shards) tokens += size_t(s.tokens);
  // Sized once: grown row by row, the vectors would be copied into fresh memory at every doubling.
  f.k.reserve(tokens * size_t(d));
  f.v.reserve(tokens * size_t(d));
  f.info.reserve(tokens);
  for (size_t p = 0; p < job.shards.size(); ++p) {
    const KvShard& s = job.shards[p];
    for (int t = 0; t < s.tokens; ++t) {
      const KvValues::Row row = values.row(meta.kv_head, meta.shard_origin[p][size_t(t)], s.info[size_t(t)].pos);
      f.k.insert(f.k.end(), row.k_exact, row.k_exact + d);
      f.v.insert(f.v.end(), row.v_exact, row.v_exact + d);
      f.info.push_back(s.info[size_t(t)]);
    }
  }
  return f;
}

std::vector<float> q_exact(const AttentionJob& job, const JobMeta& meta, uint64_t seed) {
  const int d = job.head_dim;
  std::vector<float> q(size_t(job.row_count()) * size_t(d));
  for (int r = 0; r < job.row_count(); ++r)
    tensor_row(seed, TensorKind::q, meta.row_q_head[size_t(r)], meta.row_origin[size_t(r)], job.rows[size_t(r)].pos, d,
               q.data() + size_t(r) * size_t(d));
  return q;
}

}  // namespace ahbm
