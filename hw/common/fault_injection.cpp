#include "hw/common/fault_injection.h"

namespace ahbm {

FaultConfig parse_fault_config(JsonReader r) {
  FaultConfig f;
  f.leak_q_credit_cube = int(r.integer("leak_q_credit_cube", f.leak_q_credit_cube, -1, 1 << 16));
  f.poll_q_credit = r.boolean("poll_q_credit", f.poll_q_credit);
  f.drop_state_cube = int(r.integer("drop_state_cube", f.drop_state_cube, -1, 1 << 16));
  f.nan_state_pe = int(r.integer("nan_state_pe", f.nan_state_pe, -1, 1 << 24));
  f.perturb_output = r.number("perturb_output", f.perturb_output, -1e6, 1e6);
  r.finish();
  return f;
}

Json to_json(const FaultConfig& f) {
  return Json{{"leak_q_credit_cube", f.leak_q_credit_cube},
              {"poll_q_credit", f.poll_q_credit},
              {"drop_state_cube", f.drop_state_cube},
              {"nan_state_pe", f.nan_state_pe},
              {"perturb_output", f.perturb_output}};
}

}  // namespace ahbm
