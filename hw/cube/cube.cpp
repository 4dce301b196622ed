#include "hw/cube/cube.h"

namespace ahbm {

Cube::Cube(sc_core::sc_module_name name, SimShared& sh, const std::string& path, int group, int cube,
           ReductionNetwork& net, const std::vector<std::vector<uint64_t>>& shard_bases)
    : sc_core::sc_module(name),
      q_buffer("q_buffer", sh, path + ".q_buffer", sh.cfg.cube.pes),
      reducer("reducer", sh, path + ".reducer", cube, sh.cfg.cube.pes, net) {
  q_buffer.fault_leak_credit = sh.cfg.fault.leak_q_credit_cube == cube;  // FAULT INJECTION (tests)
  for (int p = 0; p < sh.cfg.cube.pes; ++p) {
    const std::string pe_name = "pe" + std::to_string(p);
    slices.push_back(std::make_unique<HbmSlice>(("hbm" + std::to_string(p)).c_str(), sh.cfg.pe.hbm));
    pes.push_back(std::make_unique<Pe>(pe_name.c_str(), sh, path + "." + pe_name, group,
                                       cube * sh.cfg.cube.pes + p, p, q_buffer, reducer, shard_bases[size_t(p)]));
    pes.back()->hbm.bind(slices.back()->socket);
  }
}

void Cube::noc_receive(int, const NocPacket& packet) {
  q_buffer.arrive(packet.tag, packet.bytes, std::static_pointer_cast<const std::vector<float>>(packet.payload));
}

}  // namespace ahbm
