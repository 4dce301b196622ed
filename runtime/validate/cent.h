#pragma once
// `ahbm-sim validate cent`: one Llama-2 transformer block's decode latency on CENT's CXL devices of
// GDDR6-AiM channels (ASPLOS 2025; artifact Yufeng98/CENT, DRAM side arkhadem/aim_simulator), as the
// reference defines it: PIM latency (the block's AiM instruction stream on its channels) + CXL
// latency (the block's transfers between devices) + accelerator latency (RMSNorm, softmax, rotary
// embedding on the device's near-memory processors). The PIM part runs the block's instruction
// stream, generated from the reference's mapping, through hw/hbm's AimChannel with the preset of
// hw/configs/cent-device.json. docs/validation.md: protocol, parameters and their sources, results.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/hbm/aim_channel.h"
#include "hw/hbm/dram_spec.h"

namespace ahbm::validate {

// A decoder model's shape (the artifact's utils.py: embedding_size, n_heads, gqa_factor, ffn_size,
// TransformerBlock_number).
struct CentModel {
  std::string name;
  int64_t dim, heads, kv_heads, ffn, blocks;
};
const std::vector<CentModel>& cent_models();

struct CentCxl {
  double port_ns = 25, pcie_ns = 30, switch_ns = 20;  // one CXL port, PCIe link, switch traversal
  double lane_gbps = 8;       // per PCIe lane (the artifact divides bytes by GiB/s)
  bool multicast = true;      // multicast halves each lane's bandwidth
  int value_bytes = 2, message_bytes = 64, messages_per_flit = 3, flit_bytes = 256;
};

struct CentAccel {
  double ghz = 2.0;           // FREQ
  double lanes = 16;          // SIMD lanes of a channel's accelerator
  double sb_rd = 1, sb_wr = 1;        // shared-buffer read / write, cycles
  double exp_lane = 11;       // EXP_LANE_CYCLE
  double rv_rmsnorm = 26;     // RV_RMSNorm_CYCLE
  double rv_rotembed = 3;     // RISC-V cycles per rotary-embedding element, over rv_count cores
  double rv_count = 8;        // RV_COUNT
  double rv_softmax_wr = 16;  // RV_SFT_CYCLE_PIPELINE: 16 shared-buffer writes + 2 / rv_count + 1 read
};

struct CentPreset {
  int channels_per_device = 32;
  int pcie_lanes = 144;       // per CXL switch, shared by the devices
  int64_t row_values = 1024;  // bf16 values in a 2 KiB row (DRAM_column)
  int64_t burst_values = 16;  // bf16 values in a 32 B burst (burst_length)
  int reuse_size = 32;        // MAC registers a global-buffer load is reused over (--reuse-size)
  CentCxl cxl;
  CentAccel accel;
  hbm::DramSpec dram;         // one channel
  hbm::AimTiming aim;
  std::string file;
};
CentPreset read_cent_preset(const std::string& path);
std::string cent_preset_file();  // "cent-device.json"

// One row of block_calibration.csv: the split and the KV length.
struct CentRow {
  std::string model;
  int64_t devices = 8, pp = 1, tp = 1, channels_per_device = 32, channels_per_block = 32, L = 128;
};

struct CentTiming {
  int64_t pim_cycles = 0;
  double pim_ms = 0, cxl_ms = 0, acc_ms = 0, block_ms = 0;
  int64_t blocks_per_device = 1;  // blocks sharing a device (their accelerator work is serial)
  hbm::AimStats commands;
};

// The AiM instruction stream of one block, as the artifact's trace generator (Llama.py trace_only,
// TransformerBlock.py *_only_trace) emits it for `channels` channels per block and KV length L.
std::vector<hbm::AimRequest> cent_block_trace(const CentPreset& p, const CentModel& m, int64_t channels, int64_t L);
// One weight GEMV (vector_dim -> matrix_col over `channels` channels), the reuse-GB order.
void cent_gemv_trace(const CentPreset& p, int64_t channels, int64_t row_base, int64_t vector_dim, int64_t matrix_col,
                     bool activation, std::vector<hbm::AimRequest>& out);
// The row checked (model known, TP = 1, splits consistent); InputError naming column and value.
CentTiming simulate_cent_block(const CentPreset& p, const CentRow& r);

struct CentReport {
  std::string csv;
  size_t rows = 0;
  // mean / max |err| of the block and its parts (-1 where the reference column is absent)
  double mean_abs_err = -1, max_abs_err = -1;
  double part_mean[3] = {-1, -1, -1}, part_max[3] = {-1, -1, -1};  // PIM, CXL, accelerator
};
CentReport validate_cent_csv(const std::string& rows_path, const std::string& preset_dir);

}  // namespace ahbm::validate
