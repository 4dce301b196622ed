#pragma once
// A workload scenario (JSON, documented in docs/scenarios.md): the model dimensions, the
// shared prefix, and the sub-agents forked from it with their new-token counts.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/common/json_reader.h"

namespace ahbm {

struct AgentSpec {
  std::string name;
  int new_tokens = 0;
};

struct ModelSpec {
  int head_dim = 128;
};

struct Scenario {
  std::string name;
  std::string description;
  ModelSpec model;
  int shared_prefix_tokens = 0;
  std::vector<AgentSpec> agents;
  uint64_t seed = 1;

  int total_rows() const;
};

Scenario parse_scenario(const Json& j, const std::string& file);
Scenario load_scenario(const std::string& path);
Json to_json(const Scenario& s);

}  // namespace ahbm
