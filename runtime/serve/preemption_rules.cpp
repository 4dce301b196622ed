// The built-in preemption rules: each defined in its own file (preemption_<name>.cpp); one line here
// declares its entry (extern: defined in that file) and registers it, in the order names() lists.
#include "runtime/serve/preemption.h"

namespace ahbm::serve {

PreemptionRegistry builtin_preemption_rules() {
  PreemptionRegistry r;
  extern PreemptionEntry recompute_preemption(); r.add(recompute_preemption());
  extern PreemptionEntry swap_preemption(); r.add(swap_preemption());
  return r;
}

}  // namespace ahbm::serve
