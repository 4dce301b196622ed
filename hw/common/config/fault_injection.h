#pragma once
// FAULT INJECTION, for tests only. Optional "fault_injection" section of the hardware config
// that breaks the model on purpose so the tests can check that the simulator notices: the stall
// watchdog, the NaN guard and `run --check`. Everything is off by default; a real configuration
// never sets it. Documented in docs/reliability.md. Its lines are part of the parameter table
// (hw_config.h) so the parser, the schema and the fuzz dictionary know them, but they are
// marked test-only: left out of hw/configs/default.json, the docs/model.md table and to_json
// while off.
#include "hw/common/config/hw_config_param.h"

namespace ahbm {

// fault_injection: X(C++ type, key, default, allowed, unit, meaning, why this default), as in hw_config.h.
#define AHBM_PARAMS_FAULT(X)                                                                                     \
  X(int, leak_q_credit_cube, -1, between(-1, 1 << 16), "CUBE index",                                             \
    "the Q buffer of this CUBE (index within each group) never frees a tile's space after its PEs have read it: once full, the Q multicast waits for credit forever (a credit deadlock)", \
    "-1 = off")                                                                                                  \
  X(bool, poll_q_credit, false, true_or_false(), "flag",                                                         \
    "the Q source polls for Q-buffer credit every clock cycle instead of waiting for the buffer to signal free space: a credit deadlock then becomes a livelock (time runs, nothing moves)", \
    "off")                                                                                                       \
  X(int, drop_state_cube, -1, between(-1, 1 << 16), "CUBE index",                                                \
    "the reducer of this CUBE never hands its merged state to the inter-CUBE reduction: the reduction waits for a CUBE that never sends", \
    "-1 = off")                                                                                                  \
  X(int, nan_state_pe, -1, between(-1, 1 << 24), "PE index",                                                     \
    "this PE (index within its group) writes a NaN into its softmax state after its first KV tile: the NaN guard must name it", \
    "-1 = off")                                                                                                  \
  X(double, perturb_output, 0.0, between(-1e6, 1e6), "value",                                                    \
    "added to O[0][0] of the first job when it reaches the host: a wrong result that `run --check` must catch",  \
    "0 = off")

struct FaultConfig {
  AHBM_PARAMS_FAULT(AHBM_HW_MEMBER)

  bool any() const {
    return leak_q_credit_cube >= 0 || poll_q_credit || drop_state_cube >= 0 || nan_state_pe >= 0 ||
           perturb_output != 0.0;
  }
};

}  // namespace ahbm
