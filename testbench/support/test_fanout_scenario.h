#pragma once
// A plain fan-out scenario for the cost model's validation points (test_policy_model.cpp,
// test_pe_options.cpp).
#include <string>

#include "runtime/scenario/scenario.h"

namespace ahbm::test {

// `agents` agents x `tokens` new tokens over a `prefix`-token shared prefix, fan-out only.
inline Scenario fanout_scenario(int prefix, int agents, int tokens) {
  Scenario sc;
  sc.name = "p";
  sc.shared_prefix_tokens = prefix;
  for (int a = 0; a < agents; ++a) sc.agents.push_back({"a" + std::to_string(a), tokens});
  return sc;
}

}  // namespace ahbm::test
