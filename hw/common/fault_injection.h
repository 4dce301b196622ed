#pragma once
// FAULT INJECTION, for tests only. Optional "fault_injection" section of the hardware config
// that breaks the model on purpose so the tests can check that the simulator notices: the stall
// watchdog, the NaN guard and `run --check`. Everything is off by default; a real configuration
// never sets it. Documented in docs/reliability.md.
#include "hw/common/json_reader.h"

namespace ahbm {

struct FaultConfig {
  // The Q buffer of this CUBE (index within each group) never frees a tile's space after its
  // PEs have read it: once full, the Q multicast waits for credit forever (a credit deadlock).
  int leak_q_credit_cube = -1;
  // The Q source polls for Q-buffer credit every clock cycle instead of waiting for the buffer
  // to signal free space: a credit deadlock then becomes a livelock (time runs, nothing moves).
  bool poll_q_credit = false;
  // The reducer of this CUBE never hands its merged state to the inter-CUBE reduction: the
  // reduction waits for a CUBE that never sends.
  int drop_state_cube = -1;
  // This PE (index within its group) writes a NaN into its softmax state after its first KV
  // tile: the NaN guard must name it.
  int nan_state_pe = -1;
  // Added to O[0][0] of the first job when it reaches the host: a wrong result that
  // `run --check` must catch.
  double perturb_output = 0.0;

  bool any() const {
    return leak_q_credit_cube >= 0 || poll_q_credit || drop_state_cube >= 0 || nan_state_pe >= 0 ||
           perturb_output != 0.0;
  }
};

// Reads the "fault_injection" object (ranges against the chip are checked by check_hw_config).
FaultConfig parse_fault_config(JsonReader r);
Json to_json(const FaultConfig& f);

}  // namespace ahbm
