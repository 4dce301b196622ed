// P-B-D (docs/serving.md, "P-B-D"): DP_P prefill pools of prefill_groups groups, then DP_D decode
// pools of decode_groups groups (0: the rest, split evenly); each stage's pools hold one copy
// each of a whole model's weights and share one plan and one count of the operators.
#include "hw/common/base/error.h"
#include "hw/common/base/json_reader.h"
#include "runtime/serve/topology.h"

namespace ahbm::serve {

namespace {

class Pbd final : public Topology {
 public:
  TopologyLayout layout(const Workload& w, const HwConfig& hw, const std::string& hw_file) const override {
    const PbdSpec& p = *w.scheduler.pbd;
    const int pools = p.prefill_pools, prefill = pools * p.prefill_groups;
    const int decode = p.decode_groups > 0 ? p.decode_groups : (hw.groups - prefill) / p.decode_pools;
    check_fits(w, hw, hw_file, decode);
    TopologyLayout l{{}, pools, true};
    for (int i = 0; i < pools; ++i)
      l.pools.push_back({pools == 1 ? "prefill" : "prefill" + std::to_string(i), p.prefill_groups, "prefill"});
    for (int i = 0; i < p.decode_pools; ++i)
      l.pools.push_back({p.decode_pools == 1 ? "decode" : "decode" + std::to_string(i), decode, "decode"});
    return l;
  }

 private:
  // The pools fit the chip's groups, at least one group per decode pool.
  static void check_fits(const Workload& w, const HwConfig& hw, const std::string& hw_file, int decode) {
    const PbdSpec& p = *w.scheduler.pbd;
    const std::string at = w.file + ": scheduler.pbd";
    if (hw.groups < 2)
      throw InputError(hw_file + ": groups = " + std::to_string(hw.groups) + " is out of range for P-B-D mode (" + at +
                       "): a prefill pool and a decode pool need a chip of at least 2 KV-head groups (allowed: groups in [2, 1024])");
    const int pools = p.prefill_pools, prefill = pools * p.prefill_groups;
    if (decode >= 1 && prefill + p.decode_pools * decode <= hw.groups) return;
    if (pools == 1 && p.decode_pools == 1)
      throw InputError(at + ".prefill_groups = " + std::to_string(p.prefill_groups) + " and decode_groups = " +
                       std::to_string(p.decode_groups) + (p.decode_groups ? "" : " (the rest)") +
                       " do not fit the chip's groups = " + std::to_string(hw.groups) + " (" + hw_file +
                       "): allowed prefill_groups in " + range_text(int64_t(1), int64_t(hw.groups - 1)) +
                       " and prefill_groups + decode_groups <= groups");
    throw InputError(at + ".prefill_pools = " + std::to_string(pools) + " x prefill_groups = " +
                     std::to_string(p.prefill_groups) + " and decode_pools = " + std::to_string(p.decode_pools) +
                     " x decode_groups = " + std::to_string(p.decode_groups) +
                     (p.decode_groups ? "" : " (the rest, split evenly)") + " do not fit the chip's groups = " +
                     std::to_string(hw.groups) + " (" + hw_file +
                     "): allowed prefill_pools x prefill_groups + decode_pools x decode_groups <= groups, with at "
                     "least 1 group a decode pool");
  }
};

}  // namespace

TopologyEntry pbd_topology() {
  return {"pbd", "prefill-buffer-decode: prefill pools, a bounded buffer and decode pools that pull its KV",
          std::make_shared<Pbd>()};
}

}  // namespace ahbm::serve
