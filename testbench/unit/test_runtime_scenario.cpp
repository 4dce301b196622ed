// Scenario format: defaults, round trip, and clear errors (field path, value, allowed range)
// for bad input.
#include <gtest/gtest.h>

#include "hw/common/base/error.h"
#include "runtime/scenario/scenario.h"

using namespace ahbm;

namespace {

Json base() {
  return Json::parse(R"({"name": "t", "model": {"head_dim": 64}, "shared_prefix_tokens": 100,
                         "agents": [{"name": "a", "new_tokens": 3}, {"name": "b", "new_tokens": 4}]})");
}

// The InputError message of parsing `j`, or "" when it parses.
std::string error_of(const Json& j) {
  try {
    parse_scenario(j, "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RuntimeScenario, DefaultTraceKeepsItsMeaning) {
  const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json");
  ASSERT_EQ(sc.phases.size(), 1u);
  EXPECT_EQ(sc.phases[0].type, PhaseType::fanout);  // prefix already cached, one batched fan-out
  EXPECT_EQ(sc.model.num_q_heads, 1);
  EXPECT_EQ(sc.model.num_kv_heads, 1);
  EXPECT_EQ(sc.model.dtype, DType::fp32);
  EXPECT_EQ(sc.total_rows(), 160);
}

TEST(RuntimeScenario, EveryTraceParsesAndRoundTrips) {
  for (const char* name : {"fanout_8x20", "decode_heavy", "wide_fanout_32", "long_prefix_32k", "llama_gqa"}) {
    const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/" + name + ".json");
    const Json j = to_json(sc);
    EXPECT_EQ(to_json(parse_scenario(j, name)), j) << name;
  }
}

TEST(RuntimeScenario, ErrorsNameFieldValueAndRange) {
  struct Case {
    const char* what;
    std::function<void(Json&)> edit;
    std::vector<std::string> expect;
  };
  const std::vector<Case> cases = {
      {"unknown model key", [](Json& j) { j["model"]["heads"] = 2; }, {"s.json", "model", "heads"}},
      {"unknown kv key", [](Json& j) { j["kv"] = {{"page_size", 16}}; }, {"kv", "page_size"}},
      {"page_tokens range", [](Json& j) { j["kv"] = {{"page_tokens", 0}}; }, {"kv.page_tokens", "0"}},
      {"placement name", [](Json& j) { j["kv"] = {{"prefix_placement", "striped"}}; },
       {"kv.prefix_placement", "striped", "contiguous", "interleaved"}},
      {"GQA divisibility", [](Json& j) { j["model"]["num_q_heads"] = 6; j["model"]["num_kv_heads"] = 4; },
       {"model.num_kv_heads", "4", "num_q_heads = 6"}},
      {"kv heads above q heads", [](Json& j) { j["model"]["num_q_heads"] = 2; j["model"]["num_kv_heads"] = 4; },
       {"model.num_kv_heads", "4"}},
      {"dtype", [](Json& j) { j["model"]["dtype"] = "fp8"; }, {"model.dtype", "fp8", "fp16", "bf16"}},
      {"phase order", [](Json& j) { j["phases"] = Json::parse(R"([{"type": "decode", "steps": 2}, {"type": "fanout"}])"); },
       {"phases[1].type", "out of order"}},
      {"no fanout", [](Json& j) { j["phases"] = Json::parse(R"([{"type": "prefill"}])"); }, {"phases", "fanout"}},
      {"prefill longer than prefix", [](Json& j) { j["phases"] = Json::parse(R"([{"type": "prefill", "tokens": 101}, {"type": "fanout"}])"); },
       {"phases[0].tokens", "101", "100"}},
      {"decode without steps", [](Json& j) { j["phases"] = Json::parse(R"([{"type": "fanout"}, {"type": "decode"}])"); },
       {"phases[1].steps", "missing"}},
      {"unknown phase key", [](Json& j) { j["phases"] = Json::parse(R"([{"type": "fanout", "steps": 3}])"); },
       {"phases[0]", "steps"}},
      {"reserved agent name", [](Json& j) { j["agents"][0]["name"] = "main"; }, {"agents[0].name", "main"}},
      {"duplicate agent", [](Json& j) { j["agents"][1]["name"] = "a"; }, {"agents[1].name", "unique"}},
      {"decode_tokens range", [](Json& j) { j["agents"][0]["decode_tokens"] = -2; }, {"agents[0].decode_tokens", "-2"}},
  };
  ASSERT_EQ(error_of(base()), "");
  for (const Case& c : cases) {
    Json j = base();
    c.edit(j);
    const std::string e = error_of(j);
    ASSERT_FALSE(e.empty()) << c.what << ": accepted";
    for (const auto& s : c.expect) EXPECT_NE(e.find(s), std::string::npos) << c.what << ": \"" << s << "\" not in: " << e;
  }
}
