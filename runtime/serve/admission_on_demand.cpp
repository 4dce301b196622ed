// Admission on demand (vLLM): a workflow enters when the pages it needs now fit what the pool has
// free after its admitted workflows' next parts; its later growth preempts the lowest-priority
// workflows (docs/serving.md, "Admission on demand and preemption").
#include "runtime/serve/admission.h"

namespace ahbm::serve {

namespace {

class OnDemandAdmission final : public AdmissionRule {
 public:
  int64_t need(const AdmissionCandidate& c) const override { return c.pages_now; }
  bool fits(int64_t need, const PoolRoom& room) const override { return need <= room.free_now - room.promised; }
  int64_t load(const PoolRoom& room) const override { return room.in_use + room.promised; }
  int64_t held(int64_t) const override { return 0; }
  int64_t pull_need(const AdmissionCandidate& c) const override { return c.prompt_pages; }
  bool grows_on_demand() const override { return true; }
};

}  // namespace

AdmissionEntry on_demand_admission() {
  return {"on_demand", "the pages a workflow needs now; a step that cannot get its pages preempts the "
                       "lowest-priority workflows (scheduler.preemption)",
          std::make_shared<OnDemandAdmission>()};
}

}  // namespace ahbm::serve
