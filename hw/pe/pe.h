#pragma once
// One processing element next to its HBM slice. Two processes:
//  - DMA: streams the PE's KV shard, tile by tile, from the HBM slice (TLM-2.0 bursts) into
//    `buffers` SRAM slots; a slot is refilled as soon as compute releases it, so with 2+ slots
//    transfer overlaps compute (double/triple buffering).
//  - compute: per Q tile, reads Q from the CUBE's Q buffer, then per KV tile runs
//    S = Q K^T (GEMM engine), the online-softmax update (vector unit: scale, mask, exp, sums,
//    state rescale) and O += P V (GEMM engine), and finally sends its (m, l, o) state to the
//    CUBE reducer. Each step waits its closed-form cycle count (engines.h); values are
//    computed on whole blocks with Eigen when the job carries values.
#include <memory>
#include <string>
#include <vector>

#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "hw/chip/sim_shared.h"
#include "hw/cube/cube_reducer.h"
#include "hw/cube/q_buffer.h"

namespace ahbm {

// Activity codes of the PE's `activity` signal (docs/waveforms in docs/model.md).
enum class PeActivity : uint64_t { idle = 0, q_read = 1, gemm_qk = 2, softmax = 3, gemm_pv = 4, send_state = 5 };

class Pe : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Pe> hbm;

  // `shard_base[job]`: byte address of that job's K rows in the HBM slice (V follows K).
  Pe(sc_core::sc_module_name name, SimShared& sh, const std::string& path, int group, int pe_in_group,
     int local_index, QBuffer& qbuf, CubeReducer& reducer, std::vector<uint64_t> shard_base);

  // Busy time of the engines (for utilisation statistics).
  const sc_core::sc_time& gemm_busy() const { return gemm_busy_; }
  const sc_core::sc_time& vector_busy() const { return vector_busy_; }
  const sc_core::sc_time& dma_busy() const { return dma_busy_; }
  uint64_t macs() const { return macs_; }
  uint64_t gemm_tiles_issued() const { return gemm_tiles_; }

 private:
  void dma_loop();
  void compute_loop();
  // Waits `cycles`, records the span and moves the activity signal.
  void busy(PeActivity a, const char* name, uint64_t cycles, const TileRef& t, int64_t bytes,
            sc_core::sc_time* account);
  const KvShard& shard(const TileRef& t) const;
  void apply_mask(MatrixRM& s, const AttentionJob& job, const TileRef& t, const KvShard& sh, int first) const;
  std::string describe_wait() const;  // for the stall watchdog

  SimShared& sh_;
  int group_, pe_, local_;
  QBuffer& qbuf_;
  CubeReducer& reducer_;
  std::vector<uint64_t> shard_base_;
  int component_, dma_component_;
  int sig_activity_, sig_dma_;
  std::vector<std::vector<float>> slots_;  // each: K tile then V tile, kv_tile_tokens x d
  TimedQueue<int> free_slots_, full_slots_;
  sc_core::sc_time gemm_busy_, vector_busy_, dma_busy_;
  uint64_t macs_ = 0, gemm_tiles_ = 0;
  size_t tiles_done_ = 0;
  WaitNote compute_wait_, dma_wait_;
};

}  // namespace ahbm
