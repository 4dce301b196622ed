#pragma once
// One HBM CUBE: its shared Q buffer, its PEs (each with its HBM slice) and its reducer. The CUBE
// is a NoC endpoint: Q tiles multicast to it land in the Q buffer.
#include <memory>
#include <string>
#include <vector>

#include "hw/cube/cube_reducer.h"
#include "hw/cube/q_buffer.h"
#include "hw/noc/noc.h"
#include "hw/pe/hbm_slice.h"
#include "hw/pe/pe.h"

namespace ahbm {

class Cube : public sc_core::sc_module, public NocClient {
 public:
  // `shard_bases[local_pe][job]`: where each job's shard starts in that PE's HBM slice.
  Cube(sc_core::sc_module_name name, SimShared& sh, const std::string& path, int group, int cube,
       ReductionNetwork& net, const std::vector<std::vector<uint64_t>>& shard_bases);
  void noc_receive(int endpoint, const NocPacket& packet) override;

  QBuffer q_buffer;
  CubeReducer reducer;
  std::vector<std::unique_ptr<HbmSlice>> slices;
  std::vector<std::unique_ptr<Pe>> pes;
};

}  // namespace ahbm
