// Admission by reservation: a workflow enters when its whole reservation (P-B-D's prefill pool:
// its prompt's pages) fits beside the pool's reservations, so no step ever runs out of pages.
#include "runtime/serve/admission.h"

namespace ahbm::serve {

namespace {

class ReserveAdmission final : public AdmissionRule {
 public:
  int64_t need(const AdmissionCandidate& c) const override { return c.pbd ? c.prompt_pages : c.reservation; }
  // Admitted workflows hold their reservations from admission (held()), so `reserved` already
  // counts those admitted at this boundary: `promised` would count them twice.
  bool fits(int64_t need, const PoolRoom& room) const override { return room.reserved + need <= room.total; }
  int64_t load(const PoolRoom& room) const override { return room.reserved; }
  int64_t held(int64_t reservation) const override { return reservation; }
  int64_t pull_need(const AdmissionCandidate& c) const override { return c.reservation; }
  bool grows_on_demand() const override { return false; }
};

}  // namespace

AdmissionEntry reserve_admission() {
  return {"reserve", "a workflow's whole KV reservation up front: admitted only when it fits, it never runs out",
          std::make_shared<ReserveAdmission>()};
}

}  // namespace ahbm::serve
