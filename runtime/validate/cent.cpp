#include "runtime/validate/cent.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "hw/common/base/error.h"
#include "hw/common/base/json_reader.h"
#include "runtime/validate/csv_table.h"

namespace ahbm::validate {

namespace {

using hbm::AimIsr;
using hbm::AimRequest;

int64_t cdiv(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// Rows of a channel's banks, one range per tensor (the instruction stream only needs to know
// whether two instructions name the same row).
enum RowBase : int64_t {
  kRowX = 1, kRowXCopy, kRowSaNorm, kRowXq, kRowXk, kRowScores, kRowSaCopy, kRowFfnNorm, kRowX1, kRowX1Sigmoid,
  kRowWq = int64_t(1) << 24, kRowWk = int64_t(2) << 24, kRowWv = int64_t(3) << 24, kRowWo = int64_t(4) << 24,
  kRowW1 = int64_t(5) << 24, kRowW3 = int64_t(6) << 24, kRowW2 = int64_t(7) << 24, kRowCacheK = int64_t(8) << 24,
  kRowCacheV = int64_t(9) << 24,
};

// Appends instructions to a block's stream.
struct Trace {
  std::vector<AimRequest>& out;
  void isr(AimIsr i, int64_t size = 1, int64_t row = 0, int bank = 0, int64_t gap = 1) {
    if (size > 0) out.push_back(AimRequest{i, size, row, bank, gap});
  }
  void host(bool write, int64_t n) { isr(write ? AimIsr::host_write : AimIsr::host_read, n); }
};

}  // namespace

const std::vector<CentModel>& cent_models() {
  static const std::vector<CentModel> models = {
      {"Llama2-7B", 4096, 32, 32, 11008, 32},
      {"Llama2-13B", 5120, 40, 40, 13824, 40},
      {"Llama2-70B", 8192, 64, 8, 28672, 80},
  };
  return models;
}

std::string cent_preset_file() { return "cent-device.json"; }

CentPreset read_cent_preset(const std::string& path) {
  const Json file = load_json_file(path);
  JsonReader root(file, path);
  CentPreset p;
  p.file = path;
  JsonReader c = root.object("cent");
  p.channels_per_device = int(c.integer("channels_per_device", p.channels_per_device, 1, 1024));
  p.pcie_lanes = int(c.integer("pcie_lanes", p.pcie_lanes, 1, 4096));
  p.row_values = c.integer("row_values", p.row_values, 16, 65536);
  p.burst_values = c.integer("burst_values", p.burst_values, 1, 1024);
  p.reuse_size = int(c.integer("reuse_size", p.reuse_size, 2, 1024));
  if (c.has_object("cxl")) {
    JsonReader x = c.object("cxl");
    p.cxl.port_ns = x.number("port_ns", p.cxl.port_ns, 0, 1e6);
    p.cxl.pcie_ns = x.number("pcie_ns", p.cxl.pcie_ns, 0, 1e6);
    p.cxl.switch_ns = x.number("switch_ns", p.cxl.switch_ns, 0, 1e6);
    p.cxl.lane_gbps = x.number("lane_gbps", p.cxl.lane_gbps, 1e-3, 1e6);
    p.cxl.multicast = x.boolean("multicast", p.cxl.multicast);
    p.cxl.value_bytes = int(x.integer("value_bytes", p.cxl.value_bytes, 1, 16));
    p.cxl.message_bytes = int(x.integer("message_bytes", p.cxl.message_bytes, 1, 4096));
    p.cxl.messages_per_flit = int(x.integer("messages_per_flit", p.cxl.messages_per_flit, 1, 64));
    p.cxl.flit_bytes = int(x.integer("flit_bytes", p.cxl.flit_bytes, 1, 65536));
    x.finish();
  }
  if (c.has_object("accelerator")) {
    JsonReader a = c.object("accelerator");
    p.accel.ghz = a.number("ghz", p.accel.ghz, 1e-3, 1e3);
    p.accel.lanes = a.number("simd_lanes", p.accel.lanes, 1, 4096);
    p.accel.sb_rd = a.number("sb_read_cycles", p.accel.sb_rd, 0, 1e6);
    p.accel.sb_wr = a.number("sb_write_cycles", p.accel.sb_wr, 0, 1e6);
    p.accel.exp_lane = a.number("exp_lane_cycles", p.accel.exp_lane, 0, 1e6);
    p.accel.rv_rmsnorm = a.number("riscv_rmsnorm_cycles", p.accel.rv_rmsnorm, 0, 1e6);
    p.accel.rv_rotembed = a.number("riscv_rotembed_cycles", p.accel.rv_rotembed, 0, 1e6);
    p.accel.rv_count = a.number("riscv_cores", p.accel.rv_count, 1, 1024);
    p.accel.rv_softmax_wr = a.number("riscv_softmax_sb_writes", p.accel.rv_softmax_wr, 0, 1e6);
    a.finish();
  }
  if (c.has_object("aim_timing")) {
    JsonReader a = c.object("aim_timing");
    hbm::AimTiming& t = p.aim;
    for (auto [name, field] : {std::pair<const char*, int*>{"rcd_mac", &t.rcd_mac}, {"rcd_ewmul", &t.rcd_ewmul},
                               {"rcd_af", &t.rcd_af}, {"rcd_rdcp", &t.rcd_rdcp}, {"rcd_wrcp", &t.rcd_wrcp},
                               {"cl_reg", &t.cl_reg}, {"cwl_reg", &t.cwl_reg}, {"cwl_gb", &t.cwl_gb},
                               {"wpre", &t.wpre}, {"modch", &t.modch}})
      *field = int(a.integer(name, *field, 0, 100000));
    a.finish();
  }
  c.finish();
  p.dram = hbm::read_dram_spec(root.object("dram"), hbm::gddr6_aim());
  root.finish();
  if (p.dram.org.banks() != 16)
    throw InputError(path + ": dram organisation has " + std::to_string(p.dram.org.banks()) + " banks (allowed: 16, a GDDR6-AiM channel)");
  if (p.row_values * 2 != p.dram.org.page_bytes || p.burst_values * 2 != p.dram.org.burst_bytes)
    throw InputError(path + ": cent.row_values / burst_values = " + std::to_string(p.row_values) + " / " +
                     std::to_string(p.burst_values) + " (allowed: the bf16 values of dram page_bytes / burst_bytes)");
  return p;
}

void cent_gemv_trace(const CentPreset& p, int64_t channels, int64_t row_base, int64_t vector_dim, int64_t matrix_col,
                     bool activation, std::vector<AimRequest>& out) {
  // Vector_Matrix_Mul_weight[_af]_pim_only_trace, GEMV order "reuse-GB": each bank holds
  // ceil(matrix_col / banks) weight columns, a column's 2 KiB rows one after another; for each row
  // of the input vector the global buffer is written once and reused over groups of up to
  // reuse_size columns (reuse_size / 2 with the activation function): MAC registers written, one
  // all-bank MAC per column over that row, registers read back.
  Trace tr{out};
  const int64_t banks = channels * 16, col_per_bank = cdiv(matrix_col, banks), rows = cdiv(vector_dim, p.row_values);
  const int64_t groups = cdiv(col_per_bank, activation ? p.reuse_size / 2 : p.reuse_size), group = cdiv(col_per_bank, groups);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t op = r == rows - 1 ? cdiv(vector_dim - p.row_values * r, p.burst_values) : p.row_values / p.burst_values;
    tr.isr(AimIsr::wr_gb, op);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t n = g < groups - 1 ? group : col_per_bank - group * (groups - 1);
      for (int64_t i = 0; i < n; ++i) tr.isr(AimIsr::wr_bias);
      for (int64_t i = 0; i < n; ++i) tr.isr(AimIsr::mac_abk, op, row_base + (g * group + i) * rows + r);
      if (activation && r == rows - 1)
        for (int64_t i = 0; i < n; ++i) tr.isr(AimIsr::af), tr.isr(AimIsr::rd_af);
      for (int64_t i = 0; i < n; ++i) tr.isr(AimIsr::rd_mac);
    }
  }
}

std::vector<AimRequest> cent_block_trace(const CentPreset& p, const CentModel& m, int64_t channels, int64_t L) {
  // Llama.py trace_only for one block on `channels` channels (TP = 1: the block's KV cache and
  // heads stay on them). Every instruction goes to the channels of all blocks sharing the device at
  // once; the host's single-bank accesses are counted as the artifact's loops emit them.
  std::vector<AimRequest> out;
  Trace tr{out};
  const int64_t C = channels, banks = C * 16, col = p.row_values, B = p.burst_values;
  const int64_t blocks_on_device = std::max<int64_t>(p.channels_per_device / C, 1);
  const int64_t hd = m.dim / m.heads, rep = m.heads / m.kv_heads;
  auto rmsnorm = [&](int64_t x_row, int64_t copy_row, int64_t norm_row) {
    // x.pow: x and a copy in neighbouring banks, one MAC between them; the scale written to two
    // bank groups, EWMUL, copied next to the norm weights, EWMUL, result read back.
    const int64_t nb = cdiv(m.dim, banks / 2), nb_banks = cdiv(m.dim, nb);
    tr.host(true, cdiv(nb, B) * nb_banks * blocks_on_device);
    tr.host(true, cdiv(nb, B) * nb_banks * blocks_on_device);
    tr.isr(AimIsr::wr_bias);
    tr.isr(AimIsr::mac_abk, cdiv(nb, B), x_row);
    tr.isr(AimIsr::rd_mac);
    const int64_t ew = cdiv(m.dim, banks / 4), ew_banks = cdiv(m.dim, ew), op = cdiv(ew, B);
    tr.host(true, op * ew_banks * blocks_on_device);
    tr.host(true, op * ew_banks * blocks_on_device);
    tr.isr(AimIsr::ewmul, op, copy_row);
    for (int bank : {2, 6, 10, 14}) {
      tr.isr(AimIsr::copy_bkgb, op, copy_row, bank);
      tr.isr(AimIsr::copy_gbbk, op, norm_row, bank - 1);
    }
    tr.isr(AimIsr::ewmul, op, norm_row);
    tr.host(false, op * ew_banks * blocks_on_device);
    tr.isr(AimIsr::sync);
  };
  const int64_t ew = cdiv(m.dim, banks / 4), ew_banks = cdiv(m.dim, ew);

  rmsnorm(kRowX, kRowXCopy, kRowSaNorm);
  cent_gemv_trace(p, C, kRowWq, m.dim, hd * m.heads, false, out);
  cent_gemv_trace(p, C, kRowWk, m.dim, hd * m.kv_heads, false, out);
  cent_gemv_trace(p, C, kRowWv, m.dim, hd * m.kv_heads, false, out);
  // Rotary embedding: xq, xk re-mapped into bank group 1, EWMUL, results into bank group 2.
  const int64_t q_writes = cdiv(ew * 2, B) * ew_banks * blocks_on_device;
  const int64_t k_writes = cdiv(ew / rep * 2, B) * ew_banks * blocks_on_device;
  tr.host(true, q_writes);
  tr.host(true, k_writes);
  tr.isr(AimIsr::ewmul, m.dim / B, kRowXq);
  tr.isr(AimIsr::ewmul, m.dim / rep / B, kRowXk);
  tr.host(true, q_writes);
  tr.host(true, k_writes);
  // The new token's K: one bank holds a token's K (head_dim x kv_heads values), row after row.
  tr.host(true, hd * m.kv_heads / col * blocks_on_device * cdiv(col, B));
  // The new token's V: an all-bank write per (head, 16 dims) on the head's channel; the ISR goes to
  // one channel, so a channel receives its own every (channels with a head in this round) cycles.
  const int64_t heads_per_channel = cdiv(m.kv_heads, C), dim_iters = hd / 16;
  for (int64_t h = 0; h < heads_per_channel; ++h) {
    const int64_t gap = std::min(C, (m.kv_heads - 1 - h) / heads_per_channel + 1);
    for (int64_t d = 0; d < dim_iters; ++d)
      tr.isr(AimIsr::wr_abk, 1, kRowCacheV + (h * dim_iters + d) * 64 + (L - 2) / col, 0, gap);
  }
  // Scores: tokens' K round-robin over all banks; per query row (heads_per_row heads) and per
  // round of `banks` tokens, the query row into the global buffer and one MAC per head.
  const int64_t q_rows = cdiv(hd * m.kv_heads, col), rounds = cdiv(L, banks), heads_per_row = col / hd;
  for (int64_t r = 0; r < q_rows; ++r)
    for (int64_t s = 0; s < rounds; ++s)
      for (int64_t k = 0; k < rep; ++k) {
        tr.isr(AimIsr::wr_gb, col / B);
        for (int64_t h = 0; h < heads_per_row; ++h) {
          tr.isr(AimIsr::wr_bias);
          tr.isr(AimIsr::mac_abk, hd / B, kRowCacheK + s * q_rows + r);
          tr.isr(AimIsr::rd_mac);
        }
      }
  // Softmax: scores (and the scale) written to bank groups 0 and 1, EWMUL, read back; exp and
  // 1 / sum written, EWMUL, read back (store/load_for_EWMUL_score_only_trace).
  const int64_t score_rows = cdiv(L, col), heads_per_bank = cdiv(m.heads, C * 4);
  int64_t score_banks = 0;
  for (int64_t j = 0; j < heads_per_bank && j < m.heads; ++j) score_banks += std::min(banks / 4, (m.heads - 1 - j) / heads_per_bank + 1);
  int64_t score_bursts = 0;
  for (int64_t k = 0; k < score_rows; ++k) score_bursts += cdiv(k == score_rows - 1 ? L - col * k : col, B);
  const int64_t score_accesses = score_bursts * score_banks * blocks_on_device;
  for (int pass = 0; pass < 2; ++pass) {
    tr.host(true, score_accesses);
    tr.host(true, score_accesses);
    for (int64_t j = 0; j < heads_per_bank; ++j)
      for (int64_t k = 0; k < score_rows; ++k)
        tr.isr(AimIsr::ewmul, cdiv(k == score_rows - 1 ? L - col * k : col, B), kRowScores + j * score_rows + k);
    tr.host(false, score_accesses);
    tr.isr(AimIsr::sync);
  }
  // Scores x V: a channel holds heads_per_channel heads, a head's 128 dims over its 16 banks
  // (8 per bank), each dim's tokens along rows; per 1K tokens the scores into the global buffer.
  for (int64_t h = 0; h < heads_per_channel; ++h)
    for (int64_t k = 0; k < rep; ++k)
      for (int64_t r = 0; r < score_rows; ++r) {
        const int64_t op = r == score_rows - 1 ? cdiv(L - r * col, B) : col / B;
        tr.isr(AimIsr::wr_gb, op);
        for (int64_t d = 0; d < dim_iters; ++d) {
          tr.isr(AimIsr::wr_bias);
          tr.isr(AimIsr::mac_abk, op, kRowCacheV + (h * dim_iters + d) * 64 + r);
          tr.isr(AimIsr::rd_mac);
        }
      }
  cent_gemv_trace(p, C, kRowWo, m.dim, m.dim, false, out);
  rmsnorm(kRowSaCopy, kRowSaCopy, kRowFfnNorm);
  cent_gemv_trace(p, C, kRowW1, m.dim, m.ffn, true, out);
  cent_gemv_trace(p, C, kRowW3, m.dim, m.ffn, false, out);
  // SiLU(x1) * x3: through bank groups as above, in one pass or (wider FFNs) two.
  const int64_t pass0 = m.ffn > C * 4 * col ? banks / 4 * col : m.ffn;
  const int64_t parts[2] = {pass0, m.ffn - pass0};
  auto part = [&](int i, int64_t* len, int64_t* used) {
    *len = cdiv(parts[i], banks / 4);
    *used = cdiv(parts[i], *len);
  };
  const int n_parts = parts[1] > 0 ? 2 : 1;
  int64_t len[2] = {0, 0}, used[2] = {0, 0};
  for (int i = 0; i < n_parts; ++i) part(i, &len[i], &used[i]);
  auto writes = [&](int i) { return cdiv(len[i], B) * used[i] * blocks_on_device; };
  const int64_t rows_of[2] = {n_parts == 2 ? kRowX1 : kRowX1Sigmoid, kRowX1Sigmoid};
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < n_parts; ++i) tr.host(true, writes(i));
  for (int i = 0; i < n_parts; ++i) tr.isr(AimIsr::ewmul, cdiv(len[i], B), rows_of[i]);
  for (int bank : {2, 6, 10, 14}) {
    for (int i = 0; i < n_parts; ++i) tr.isr(AimIsr::copy_bkgb, cdiv(len[i], B), rows_of[i], bank);
    for (int i = 0; i < n_parts; ++i) tr.isr(AimIsr::copy_gbbk, cdiv(len[i], B), rows_of[i], bank - 1);
  }
  for (int i = 0; i < n_parts; ++i) tr.host(true, writes(i));
  for (int i = 0; i < n_parts; ++i) tr.isr(AimIsr::ewmul, cdiv(len[i], B), rows_of[i]);
  for (int i = 0; i < n_parts; ++i) tr.host(false, writes(i));
  tr.isr(AimIsr::sync);
  cent_gemv_trace(p, C, kRowW2, m.ffn, m.dim, false, out);
  return out;
}

namespace {

const CentModel& model_named(const std::string& name, const std::string& where) {
  for (const CentModel& m : cent_models())
    if (m.name == name) return m;
  std::string all;
  for (const CentModel& m : cent_models()) all += (all.empty() ? "" : ", ") + m.name;
  throw InputError(where + "column Model = \"" + name + "\" (allowed: " + all + ")");
}

// One message of `values` values over the CXL fabric (cxl_latency.py): a round trip through two
// ports each way, the PCIe links and the switch, plus its PBR flits (3 x 64 B messages of 2 B
// values per 256 B flit) at the device's share of the switch's lanes.
double cxl_message_ns(const CentCxl& x, int64_t values, int64_t lanes) {
  const double one_hop = 4 * x.port_ns + 2 * x.pcie_ns + x.switch_ns;
  const double gib_per_s = double(lanes) * x.lane_gbps * (x.multicast ? 0.5 : 1.0);
  const int64_t flits = cdiv(values * x.value_bytes, int64_t(x.message_bytes) * x.messages_per_flit);
  return one_hop + double(flits) * x.flit_bytes / gib_per_s * 1e9 / double(int64_t(1) << 30);
}

}  // namespace

CentTiming simulate_cent_block(const CentPreset& p, const CentRow& r) {
  const CentModel& m = model_named(r.model, "");
  if (r.tp != 1)
    throw InputError("column Tensor parallelism = " + std::to_string(r.tp) +
                     ": a block split over devices needs the chips to talk to each other (the many-chips issue); "
                     "validate cent runs Tensor parallelism = 1 only");
  if (r.channels_per_device != p.channels_per_device)
    throw InputError("column Channels per device = " + std::to_string(r.channels_per_device) + " (allowed: " +
                     std::to_string(p.channels_per_device) + ", the preset's device)");
  if (r.channels_per_block < 1 || r.channels_per_block > r.channels_per_device || r.channels_per_device % r.channels_per_block)
    throw InputError("column Channels per block = " + std::to_string(r.channels_per_block) + " (allowed: a divisor of " +
                     std::to_string(r.channels_per_device) + ", the channels per device)");
  // The artifact's two TP = 1 runs: one block per device's channels, devices = PP x TP (its
  // "model parallel" run with one device per tensor group), or every block on its own channels,
  // PP = the model's blocks ("pipeline parallel").
  const bool whole_device = r.pp * r.tp == r.devices;
  if (whole_device && r.channels_per_block != r.channels_per_device)
    throw InputError("column Channels per block = " + std::to_string(r.channels_per_block) + " (allowed: " +
                     std::to_string(r.channels_per_device) + " when Pipeline parallelism x Tensor parallelism = Device number)");
  if (!whole_device && r.pp != m.blocks)
    throw InputError("column Pipeline parallelism = " + std::to_string(r.pp) + " (allowed: " + std::to_string(r.devices) +
                     " / Tensor parallelism, or " + std::to_string(m.blocks) + ", the blocks of " + m.name + ")");
  if (!whole_device && cdiv(m.blocks, r.devices) > r.channels_per_device / r.channels_per_block)
    throw InputError("column Channels per block = " + std::to_string(r.channels_per_block) + ": " + std::to_string(r.devices) +
                     " devices cannot hold " + std::to_string(m.blocks) + " blocks of that many channels");
  if (r.L < 1 || r.L > 65536)
    throw InputError("column Sequence length = " + std::to_string(r.L) + " (allowed: an integer in [1, 65536])");

  CentTiming t;
  hbm::AimChannel ch(p.dram, p.aim);
  for (const hbm::AimRequest& q : cent_block_trace(p, m, r.channels_per_block, r.L)) ch.run(q);
  t.pim_cycles = ch.finish();
  t.commands = ch.stats();
  t.pim_ms = double(t.pim_cycles) * p.dram.t.tck_ns * 1e-6;

  const int64_t lanes = p.pcie_lanes / r.devices;
  if (whole_device) {
    // llama_latency with TP devices per block: x broadcast before Q/K/V, O and w1/w3, partial sums
    // gathered after each GEMV, the FFN vector broadcast and gathered once (TP = 1: the gathers
    // carry nothing but still take their round trip).
    const int64_t d = m.dim, f = m.ffn, tp = r.tp;
    const double bcast = cxl_message_ns(p.cxl, d, lanes), gather = cxl_message_ns(p.cxl, cdiv(d * 1, tp) * (tp - 1), lanes);
    const double ffn_bcast = cxl_message_ns(p.cxl, f, lanes), ffn_gather = cxl_message_ns(p.cxl, cdiv(f, tp) * (tp - 1), lanes);
    t.cxl_ms = (bcast * 5 + gather * 5 + ffn_gather + ffn_bcast) * 1e-6;
  } else {
    // vector_latency: the block's output vector to the next pipeline stage.
    t.cxl_ms = cxl_message_ns(p.cxl, m.dim, lanes) * 1e-6;
  }
  t.blocks_per_device = whole_device ? 1 : r.channels_per_device / r.channels_per_block;

  // calculate_acc_latency / power_calculator (cent_power_calculator.py): the device's channel
  // accelerators pipelined (a vector op over all channels: channels x 2 reads + 1 + 1 write), EXP
  // lanes, the RISC-V cores for the reduction tails and the rotary embedding.
  const CentAccel& a = p.accel;
  const double nch = double(p.channels_per_device);
  const double vec = nch * 2 * a.sb_rd + 1 + a.sb_wr, exp = nch * a.sb_rd + a.exp_lane + a.sb_wr;
  const double rmsnorm = 2 * (double(m.dim) / a.lanes / a.lanes / nch * vec + a.sb_rd + a.sb_wr + 1 + a.rv_rmsnorm);
  const double softmax = double(r.L) * double(m.heads) / a.lanes / nch * (exp + vec) + double(m.heads) * a.sb_rd +
                         double(m.heads) * (a.rv_softmax_wr * a.sb_wr + 2 / a.rv_count + a.sb_rd);
  const double rotary = (1 + double(m.kv_heads) / double(m.heads)) * double(m.dim) * a.rv_rotembed / a.rv_count;
  t.acc_ms = (rmsnorm + softmax + rotary) / (a.ghz * 1e6) * double(t.blocks_per_device);
  t.block_ms = t.pim_ms + t.cxl_ms + t.acc_ms;
  return t;
}

CentReport validate_cent_csv(const std::string& rows_path, const std::string& preset_dir) {
  const CsvTable table = read_csv_table(rows_path);
  table.require({"Model", "Device number", "Pipeline parallelism", "Tensor parallelism", "Channels per device",
                 "Channels per block", "Sequence length"});
  const char* ref_cols[4] = {"PIM latency", "CXL latency", "Acc latency", "TransformerBlock latency"};
  bool has_ref[4];
  for (int i = 0; i < 4; ++i) has_ref[i] = table.has(ref_cols[i]);

  std::vector<CentRow> rows;
  std::vector<std::array<double, 4>> refs;
  for (const CsvTable::Row& in : table.rows) {
    CentRow r;
    r.model = table.cell(in, "Model");
    model_named(r.model, table.where(in) + ": ");
    r.devices = table.integer(in, "Device number", 1, 4096);
    r.pp = table.integer(in, "Pipeline parallelism", 1, 4096);
    r.tp = table.integer(in, "Tensor parallelism", 1, 4096);
    if (r.tp != 1)
      throw InputError(table.where(in) + ": column Tensor parallelism = " + std::to_string(r.tp) +
                       ": a block split over devices needs the chips to talk to each other (the many-chips issue); "
                       "validate cent runs Tensor parallelism = 1 only");
    r.channels_per_device = table.integer(in, "Channels per device", 1, 1024);
    r.channels_per_block = table.integer(in, "Channels per block", 1, 1024);
    r.L = table.integer(in, "Sequence length", 1, 65536);
    std::array<double, 4> ref{};
    for (int i = 0; i < 4; ++i) ref[size_t(i)] = has_ref[i] ? table.positive(in, ref_cols[i]) : 0;
    rows.push_back(r);
    refs.push_back(ref);
  }
  const CentPreset p = read_cent_preset(preset_dir + "/" + cent_preset_file());

  // Every row is checked before anything is written (the simulation's own checks name the line).
  std::vector<CentTiming> times;
  for (size_t i = 0; i < rows.size(); ++i) {
    try {
      times.push_back(simulate_cent_block(p, rows[i]));
    } catch (const InputError& e) {
      throw InputError(table.where(table.rows[i]) + ": " + e.what());
    }
  }

  CentReport rep;
  rep.rows = rows.size();
  std::ostringstream out;
  for (size_t i = 0; i < table.header.size(); ++i) out << (i ? "," : "") << table.header[i];
  out << ",ahbm_pim_ms,ahbm_cxl_ms,ahbm_acc_ms,ahbm_block_ms";
  const char* err_cols[4] = {"err_pim", "err_cxl", "err_acc", "err"};
  for (int i = 0; i < 4; ++i)
    if (has_ref[i]) out << "," << err_cols[i];
  out << "\n";
  double sum[4] = {0, 0, 0, 0}, worst[4] = {0, 0, 0, 0};
  for (size_t k = 0; k < rows.size(); ++k) {
    const CentTiming& t = times[k];
    const CsvTable::Row& in = table.rows[k];
    for (size_t i = 0; i < in.cells.size(); ++i) out << (i ? "," : "") << in.cells[i];
    const double sim[4] = {t.pim_ms, t.cxl_ms, t.acc_ms, t.block_ms};
    char buf[64];
    for (double v : sim) {
      std::snprintf(buf, sizeof buf, ",%.7f", v);
      out << buf;
    }
    for (int i = 0; i < 4; ++i) {
      if (!has_ref[i]) continue;
      const double e = (sim[i] - refs[k][size_t(i)]) / refs[k][size_t(i)];
      std::snprintf(buf, sizeof buf, ",%.5f", e);
      out << buf;
      sum[i] += std::fabs(e);
      worst[i] = std::max(worst[i], std::fabs(e));
    }
    out << "\n";
  }
  rep.csv = out.str();
  const double n = double(rows.size());
  for (int i = 0; i < 3; ++i)
    if (has_ref[i]) rep.part_mean[i] = sum[i] / n, rep.part_max[i] = worst[i];
  if (has_ref[3]) rep.mean_abs_err = sum[3] / n, rep.max_abs_err = worst[3];
  return rep;
}

}  // namespace ahbm::validate
