// Pipeline parallelism over a system of chips (issue 39; runtime/model/parallel.h,
// runtime/step/model_steps.h, docs/system.md): the layers split into stages of consecutive
// layers, each stage on its own chips, a step's rows sent from each stage to the next over the
// system network.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "hw/common/base/error.h"
#include "hw/system/collectives.h"
#include "runtime/model/parallel.h"
#include "runtime/run/driver.h"
#include "runtime/scenario/scenario.h"
#include "runtime/step/system_collectives.h"
#include "test_model_support.h"
#include "test_runtime_support.h"
#include "test_support.h"

using namespace ahbm;

namespace {

// The small model of test_tensor_parallel.cpp: hidden 256, 4 heads of 64, 2 KV heads, FFN 512.
Json small_model(int layers, int tp, int pp) {
  Json m = {{"hidden_size", 256}, {"intermediate_size", 512}, {"num_attention_heads", 4},
            {"num_key_value_heads", 2}, {"num_hidden_layers", layers}, {"vocab_size", 1000},
            {"head_dim", 64}, {"dtype", "fp16"}};
  if (tp > 1 || pp > 1) m["parallel"] = {{"tp", tp}, {"pp", pp}};
  return m;
}

Scenario scenario_of(const Json& model) {
  const Json j = {{"name", "pp"},
                  {"model", model},
                  {"shared_prefix_tokens", 64},
                  {"seed", 3},
                  {"agents", {{{"name", "a0"}, {"new_tokens", 4}}, {{"name", "a1"}, {"new_tokens", 4}}}},
                  {"phases", {{{"type", "prefill"}, {"tokens", 32}}, {{"type", "fanout"}}, {{"type", "decode"}, {"steps", 2}}}}};
  return parse_scenario(j, "pp.json");
}

HwConfig system_of(int chips, const std::string& network = "switch") {
  HwConfig hw;
  hw.system.chips = chips;
  hw.system.network.model = network;
  return hw;
}

std::string input_error(const std::function<void()>& f) { return test::input_error_of(f); }

ModelConfig load(const std::string& name) { return load_model_config(test::source_path("traces/models/" + name + ".json")); }

// One send of `bytes` from chip `from` to chip `to` on an otherwise idle network, and its
// alpha-beta closed form there (alpha + S / B).
std::pair<double, double> one_send(const HwConfig& hw, int from, int to, uint64_t bytes) {
  CollectiveSpec s;
  s.kind = CollectiveKind::p2p;
  s.algo = CollectiveAlgo::direct;
  s.ranks = {from, to};
  s.bytes = bytes;
  const CollectiveRun run = run_collectives(system_network_registry(), SystemNetworkSpec::from_config(hw, "hw"), {s});
  return {run.results.at(0).time_ns(), collective_closed_form_ns(s.kind, s.algo, 2, double(bytes), *run.alpha_beta)};
}

}  // namespace

TEST(PipelineParallel, StagesSplitTheLayersTheFirstStagesOneMore) {
  EXPECT_EQ(pipeline_stage_layers(80, 8), std::vector<int>(8, 10));
  EXPECT_EQ(pipeline_stage_layers(10, 3), (std::vector<int>{4, 3, 3}));
  EXPECT_EQ(pipeline_stage_layers(5, 5), std::vector<int>(5, 1));
  const ModelConfig m = load("llama-3-70b");
  // TP 4 x PP 2: a chip holds a quarter of 40 layers' heads and FFN.
  const ModelConfig c = chip_model(m, {4, 2});
  EXPECT_EQ(c.num_hidden_layers, 40);
  EXPECT_EQ(c.num_attention_heads, 16);
  EXPECT_EQ(c.num_key_value_heads, 2);
  EXPECT_EQ(chip_model(m, {1, 3}).num_hidden_layers, 27);  // 27 + 27 + 26
  EXPECT_EQ(pipeline_parallel_problem(m, 80), "");
  EXPECT_NE(pipeline_parallel_problem(m, 81).find("more stages than num_hidden_layers = 80"), std::string::npos);
  EXPECT_EQ((Parallelism{4, 2}).name(), "model.parallel.tp = 4 x pp = 2");
  EXPECT_EQ((Parallelism{1, 8}).name(), "model.parallel.pp = 8");
}

TEST(PipelineParallel, AStepIsEveryLayerOnItsStagePlusTheSendsBetweenStages) {
  // 4 layers in 2 stages of 2 on 2 chips of one switch, against the same model on one chip: the
  // same operators and attention, plus one send of the step's rows from stage 0 to stage 1.
  const HwConfig hw = system_of(2);
  const RunOutput pp = test::timing_only_run(scenario_of(small_model(4, 1, 2)), hw);
  const RunOutput one = test::timing_only_run(scenario_of(small_model(4, 1, 1)), hw);
  const Json a = to_json(pp.summary), b = to_json(one.summary);
  ASSERT_EQ(a["steps"].size(), b["steps"].size());
  double sends = 0;
  for (size_t i = 0; i < a["steps"].size(); ++i) {
    const Json& sa = a["steps"][i];
    const Json& sb = b["steps"][i];
    const int rows = sa["layers"]["rows"];
    // rows x hidden 256 x 2 bytes from chip 0 to chip 1: the closed form on the idle switch.
    const auto [simulated, closed] = one_send(hw, 0, 1, uint64_t(rows) * 256 * 2);
    EXPECT_NEAR(simulated, closed, 0.01 * closed) << sa["label"];
    EXPECT_NEAR(sa["layers"]["pp_send_ns"].get<double>(), simulated, 1e-9 * simulated) << sa["label"];
    EXPECT_NEAR(sa["ns"].get<double>(), sb["ns"].get<double>() + simulated, 1e-6 * sa["ns"].get<double>()) << sa["label"];
    EXPECT_EQ(sa["layers"]["operators_ns"], sb["layers"]["operators_ns"]) << sa["label"];
    EXPECT_EQ(sa["layers"]["attention_ns"], sb["layers"]["attention_ns"]) << sa["label"];
    sends += simulated;
  }
  EXPECT_NEAR(a["total_ns"].get<double>(), b["total_ns"].get<double>() + sends, 1e-6 * a["total_ns"].get<double>());
  // One send span per step, after layer 1 (stage 0's last).
  int send_spans = 0;
  for (const Span& sp : pp.sim.spans->spans())
    if (pp.sim.spans->name(sp.component) == "runtime.pp_send") {
      ++send_spans;
      EXPECT_EQ(pp.sim.spans->name(sp.activity), "layer1");
    }
  const int steps = int(a["steps"].size());
  EXPECT_EQ(send_spans, steps);
  const Json& p = a["operators"]["pipeline_parallel"];
  EXPECT_EQ(p["pp"], 2);
  EXPECT_EQ(p["stages"][0]["layers"], 2);
  EXPECT_EQ(p["stages"][1]["first_layer"], 2);
  EXPECT_EQ(p["stages"][1]["chips"], Json::array({1}));
  EXPECT_EQ(p["sends"]["calls"], steps);
  EXPECT_NEAR(p["sends"]["time_ns"].get<double>(), sends, 1e-6 * sends);
  // Each chip is busy only while its stage runs: the bubble is 1 - busy / (2 x the steps' time),
  // above one half by the sends.
  const double busy = p["stages"][0]["busy_ns"].get<double>() + p["stages"][1]["busy_ns"].get<double>();
  double steps_ns = 0;
  for (const Json& s : a["operators"]["by_step"]) steps_ns += s["ns"].get<double>();
  EXPECT_NEAR(busy + sends, steps_ns, 1e-6 * steps_ns);
  EXPECT_NEAR(p["bubble_fraction"].get<double>(), 1.0 - busy / (2 * steps_ns), 1e-9);
  EXPECT_GT(p["bubble_fraction"].get<double>(), 0.5);
  // Every layer's operators are stage 1's first layer's for layers 2 and 3.
  EXPECT_EQ(a["operators"]["by_layer"][3]["stage"], 1);
  EXPECT_EQ(a["operators"]["layers"], 4);
  EXPECT_EQ(a["config"]["scenario"]["model"]["parallel"]["pp"], 2);
}

TEST(PipelineParallel, TensorTimesPipelineRunsEachStagesAllReducesOnItsOwnChips) {
  // TP 2 x PP 2 on 4 chips: chips 0, 1 are stage 0's TP group, 2, 3 stage 1's.
  const HwConfig hw = system_of(4);
  const RunOutput r = test::timing_only_run(scenario_of(small_model(4, 2, 2)), hw);
  const Json a = to_json(r.summary);
  const int steps = int(a["steps"].size());
  EXPECT_EQ(a["operators"]["tensor_parallel"]["all_reduce"]["calls"], 2 * 4 * steps);
  EXPECT_EQ(a["operators"]["pipeline_parallel"]["sends"]["calls"], steps);
  EXPECT_EQ(a["operators"]["pipeline_parallel"]["stages"][1]["chips"], Json::array({2, 3}));
  SystemCollectives net(hw, "hw", Parallelism{2, 2});
  const uint64_t bytes = 8 * 256 * 2;
  // On one switch every chip has a port of its own: stage 1's group as fast as stage 0's, and the
  // two ranks' sends as fast as one.
  EXPECT_EQ(net.ns(CollectiveKind::all_reduce, bytes, 1), net.ns(CollectiveKind::all_reduce, bytes, 0));
  EXPECT_NEAR(net.stage_send_ns(0, bytes), one_send(hw, 0, 2, bytes).first, 1e-9);
  // On a ring of 4 the sends 0 -> 2 and 1 -> 3 both cross the link 1 -> 2: slower than one alone.
  const HwConfig ring = system_of(4, "ring");
  SystemCollectives on_ring(ring, "hw", Parallelism{2, 2});
  EXPECT_GT(on_ring.stage_send_ns(0, 1 << 20), 1.5 * one_send(ring, 0, 2, 1 << 20).first);
  // The split needs tp x pp chips.
  const std::string e = input_error([] { test::timing_only_run(scenario_of(small_model(4, 2, 2)), system_of(3)); });
  EXPECT_NE(e.find("model.parallel.tp = 2 x pp = 2 needs 4 chips"), std::string::npos) << e;
  EXPECT_NE(e.find("system.chips = 3"), std::string::npos) << e;
}

TEST(PipelineParallel, TheLargestStageMustFitItsChipAndEachStageNeedsALayer) {
  // LLaMA-3-70B in 2 stages: a chip holds 40 layers, the embedding and the LM head.
  HwConfig hw = system_of(2);
  hw.pe.hbm.capacity_bytes = uint64_t(1) << 30;
  const ModelConfig m = load("llama-3-70b");
  const std::string params = std::to_string(total_params(chip_model(m, {1, 2})));
  Json model = {{"config", test::source_path("traces/models/llama-3-70b.json")}, {"dtype", "fp16"}, {"parallel", {{"pp", 2}}}};
  std::string e = input_error([&] { test::timing_only_run(scenario_of(model), hw); });
  EXPECT_NE(e.find("each chip of the split model.parallel.pp = 2 (the layers of the largest of 2 stages"), std::string::npos) << e;
  EXPECT_NE(e.find(params + " parameters"), std::string::npos) << e;
  EXPECT_LT(total_params(chip_model(m, {1, 2})), total_params(m));
  // More stages than layers.
  e = input_error([] { scenario_of(small_model(2, 1, 3)); });
  EXPECT_NE(e.find("model.parallel.pp"), std::string::npos) << e;
  EXPECT_NE(e.find("value 3 is more stages than num_hidden_layers = 2"), std::string::npos) << e;
  // The KV page of a chip holds its stage's layers only: 2 stages halve it.
  EXPECT_EQ(kv_page_bytes(scenario_of(small_model(4, 1, 2)), 1) * 2, kv_page_bytes(scenario_of(small_model(4, 1, 1)), 1));
  // A chip with room for 2 pages beside its weights, and a 4096-token prefix: the KV pool fills,
  // and the message counts the stage's layers in a page.
  Json j = {{"name", "pp"}, {"model", small_model(4, 1, 2)}, {"shared_prefix_tokens", 4096}, {"seed", 3},
            {"agents", {{{"name", "a0"}, {"new_tokens", 4}}}}, {"phases", {{{"type", "prefill"}, {"tokens", 32}}, {{"type", "fanout"}}}}};
  const Scenario sc = parse_scenario(j, "pp.json");
  HwConfig small = system_of(2);
  small.pe.hbm.capacity_bytes =
      plan_memory(*sc.model.full, sc.model.dtype, small).weight_bytes_max_pe + 2 * kv_page_bytes(sc, small.groups);
  e = input_error([&] { test::timing_only_run(sc, small); });
  EXPECT_NE(e.find("KV capacity exceeded"), std::string::npos) << e;
  EXPECT_NE(e.find("x 2 layers (the largest pipeline stage's) x KV heads per group"), std::string::npos) << e;
}

TEST(PipelineParallel, TheNetworksLinksAndEnergyCountEveryCollectiveAndTheSystemEveryChip) {
  // TP 2 x PP 2 on one switch: each chip has a link to the switch and one back, so a byte a chip
  // sends crosses 2 links. Per step: 4 layers x 2 ring all-reduces of S = rows x 256 x 2 bytes
  // over 2 ranks (each rank sends 2 (n - 1) / n x S = S), one boundary's 2 sends of S, and the
  // logits' ring all-gather of G = logit rows x 500 x 2 ranks x 2 bytes on stage 1 (each rank
  // sends (n - 1) / n x G = G / 2).
  const HwConfig hw = system_of(4);
  const Json a = to_json(test::timing_only_run(scenario_of(small_model(4, 2, 2)), hw).summary);
  uint64_t expect = 0;
  for (const Json& s : a["steps"]) {
    const uint64_t S = uint64_t(s["layers"]["rows"].get<int>()) * 256 * 2;
    const uint64_t G = uint64_t(s["layers"]["lm_head_rows"].get<int>()) * 500 * 2 * 2;
    expect += 2 * (4 * 2 * (2 * S) + 2 * S + 2 * (G / 2));
  }
  const Json& net = a["operators"]["system_network"];
  EXPECT_EQ(net["link_bytes"].get<uint64_t>(), expect);
  EXPECT_EQ(net["chips"], 4);
  ASSERT_EQ(net["links"].size(), 8u);  // chip0..3 -> sw0 and back
  uint64_t sum = 0;
  for (const Json& l : net["links"]) {
    sum += l["bytes"].get<uint64_t>();
    EXPECT_GT(l["busy_ns"].get<double>(), 0.0) << l["link"];
  }
  EXPECT_EQ(sum, expect);
  // 40 pJ a byte a link (system.network's default energy_pj_per_byte).
  EXPECT_NEAR(net["energy_j"].get<double>(), double(expect) * 40e-12, 1e-9 * double(expect) * 40e-12);
  // The system: the simulated rank's dynamic energy tp times, its static energy once per chip.
  const Json& e = a["energy"];
  const Json& sys = e["system"];
  EXPECT_EQ(sys["chips"], 4);
  EXPECT_NEAR(sys["dynamic_j"].get<double>(), 2 * e["dynamic_j"].get<double>(), 1e-9 * sys["dynamic_j"].get<double>());
  EXPECT_NEAR(sys["static_j"].get<double>(), 4 * e["static_j"].get<double>(), 1e-9 * sys["static_j"].get<double>());
  EXPECT_EQ(sys["network_j"], net["energy_j"]);
  EXPECT_NEAR(sys["total_j"].get<double>(),
              sys["dynamic_j"].get<double>() + sys["static_j"].get<double>() + sys["network_j"].get<double>(),
              1e-9 * sys["total_j"].get<double>());
  // One chip, no split: neither block.
  const Json one = to_json(test::timing_only_run(scenario_of(small_model(4, 1, 1)), hw).summary);
  EXPECT_FALSE(one["operators"].contains("system_network"));
  EXPECT_FALSE(one["energy"].contains("system"));
}
