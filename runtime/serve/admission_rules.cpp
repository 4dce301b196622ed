// The built-in admission rules: each defined in its own file (admission_<name>.cpp); one line here
// declares its entry (extern: defined in that file) and registers it, in the order names() lists.
#include "runtime/serve/admission.h"

namespace ahbm::serve {

AdmissionRegistry builtin_admission_rules() {
  AdmissionRegistry r;
  extern AdmissionEntry reserve_admission(); r.add(reserve_admission());
  extern AdmissionEntry on_demand_admission(); r.add(on_demand_admission());
  return r;
}

}  // namespace ahbm::serve
