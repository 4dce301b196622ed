// Expert parallelism over a system of chips (issue 39 item 3; runtime/model/parallel.h,
// runtime/step/model_steps.h, docs/system.md "Expert parallelism"): the experts of every MoE
// layer split over the TP group's chips, each MoE layer adding an all-to-all dispatch, an
// all-to-all combine and an all-gather of the rows, timed on the system network.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "hw/common/base/error.h"
#include "hw/system/collectives.h"
#include "runtime/model/memory_map.h"
#include "runtime/model/parallel.h"
#include "runtime/run/driver.h"
#include "runtime/scenario/scenario.h"
#include "runtime/step/system_collectives.h"
#include "test_runtime_support.h"
#include "test_support.h"

using namespace ahbm;

namespace {

// The small model of test_tensor_parallel.cpp made MoE: hidden 256, 4 heads of 64, 2 KV heads,
// 4 experts of FFN 512, 2 per token.
Json small_moe(int layers = 2) {
  return Json{{"hidden_size", 256}, {"intermediate_size", 512}, {"num_attention_heads", 4},
              {"num_key_value_heads", 2}, {"num_hidden_layers", layers}, {"vocab_size", 1000},
              {"head_dim", 64}, {"num_local_experts", 4}, {"num_experts_per_tok", 2}, {"dtype", "fp16"}};
}

Json mixtral(const Json& parallel) {
  Json m = {{"config", test::source_path("traces/models/mixtral-8x7b.json")}, {"dtype", "fp16"}};
  if (!parallel.is_null()) m["parallel"] = parallel;
  return m;
}

// Prefill of `prefill` rows, a fan-out of 2 x 4 rows, `decode` decode steps of 2 rows.
Scenario scenario_of(const Json& model, int prefill = 32, int decode = 2) {
  const Json j = {{"name", "ep"},
                  {"model", model},
                  {"shared_prefix_tokens", 64},
                  {"seed", 3},
                  {"agents", {{{"name", "a0"}, {"new_tokens", 4}}, {{"name", "a1"}, {"new_tokens", 4}}}},
                  {"phases",
                   {{{"type", "prefill"}, {"tokens", prefill}}, {{"type", "fanout"}}, {{"type", "decode"}, {"steps", decode}}}}};
  return parse_scenario(j, "ep.json");
}

Json with_split(Json model, int tp, int ep) {
  model["parallel"] = {{"tp", tp}, {"ep", ep}};
  return model;
}

uint64_t expert_bytes(const MemoryMap& map) {
  uint64_t b = 0;
  for (const auto& t : map.tensors)
    if (t.name == "mlp.gate_proj" || t.name == "mlp.up_proj" || t.name == "mlp.down_proj") b += t.bytes;
  return b;
}

}  // namespace

TEST(ExpertParallel, AChipHoldsWholeExpertsAndEpCutsItsExpertBytes) {
  const ModelConfig m = load_model_config(test::source_path("traces/models/mixtral-8x7b.json"));
  HwConfig hw;
  const uint64_t whole = expert_bytes(plan_memory(m, DType::fp16, hw));
  EXPECT_EQ(whole, uint64_t(32) * 8 * 3 * 4096 * 14336 * 2);  // 32 layers x 8 experts x 3 matrices, fp16
  for (int ep : {2, 4, 8}) {
    Parallelism p;
    p.tp = p.ep = ep;
    const ModelConfig c = chip_model(m, p);
    EXPECT_EQ(c.local_experts(), 8 / ep);
    EXPECT_EQ(c.intermediate_size, 14336);  // whole experts, not tensor-sliced
    EXPECT_TRUE(c.moe());                   // ep = 8: one expert a chip, still routed over all 8
    const MemoryMap map = plan_memory(c, DType::fp16, hw);
    EXPECT_EQ(expert_bytes(map) * uint64_t(ep), whole) << ep;
    // The router scores every expert on every chip.
    for (const auto& t : map.tensors) {
      if (t.name == "mlp.router") {
        EXPECT_EQ(t.elements, 4096 * 8) << ep;
      }
    }
    // Each local expert has its shards in the map (the jobs read them), none beyond.
    EXPECT_EQ(map.layer0_columns.count(expert_tensor("mlp.gate_proj", 8 / ep - 1)), 1u) << ep;
    EXPECT_EQ(map.layer0_columns.count(expert_tensor("mlp.gate_proj", 8 / ep)), 0u) << ep;
  }
  // ep = 1 is the model (tp = 1) or the tensor-parallel shard unchanged.
  Parallelism one;
  EXPECT_EQ(layer_params(chip_model(m, one)), layer_params(m));
}

TEST(ExpertParallel, ASplitThatDoesNotFitIsRefusedNamingItAndOneChipsNumbers) {
  HwConfig hw = test::system_of_chips(2);
  hw.pe.hbm.capacity_bytes = uint64_t(1) << 30;  // 32 GiB a chip: Mixtral's half (46.7 GB) does not fit
  const std::string e = test::input_error_of([&] { test::timing_only_run(scenario_of(mixtral({{"tp", 2}, {"ep", 2}})), hw); });
  EXPECT_NE(e.find("each chip of the split model.parallel.tp = 2, ep = 2"), std::string::npos) << e;
  EXPECT_NE(e.find("its experts whole: 1/2 of each MoE layer's experts"), std::string::npos) << e;
  EXPECT_NE(e.find("model weights do not fit"), std::string::npos) << e;
  EXPECT_NE(e.find("model.parallel.ep"), std::string::npos) << e;
}

TEST(ExpertParallel, BadSplitsAreInputErrorsNamingTheField) {
  // A dense model has no experts.
  Json dense = small_moe();
  dense.erase("num_local_experts"), dense.erase("num_experts_per_tok");
  std::string e = test::input_error_of([&] { scenario_of(with_split(dense, 2, 2)); });
  EXPECT_NE(e.find("model.parallel.ep"), std::string::npos) << e;
  EXPECT_NE(e.find("value 2 needs an MoE model, and num_local_experts = 1"), std::string::npos) << e;
  EXPECT_NE(e.find("allowed: 1"), std::string::npos) << e;
  // 4 experts do not split over 3 chips.
  e = test::input_error_of([&] { scenario_of(with_split(small_moe(), 1, 3)); });
  EXPECT_NE(e.find("model.parallel.ep"), std::string::npos) << e;
  EXPECT_NE(e.find("value 3 does not divide num_local_experts = 4"), std::string::npos) << e;
  EXPECT_NE(e.find("allowed: 1, 2, 4"), std::string::npos) << e;
  // The experts go on the TP group's chips.
  e = test::input_error_of([&] { scenario_of(with_split(small_moe(), 1, 2)); });
  EXPECT_NE(e.find("model.parallel.ep"), std::string::npos) << e;
  EXPECT_NE(e.find("value 2 is not tp = 1"), std::string::npos) << e;
  e = test::input_error_of([&] { scenario_of(with_split(small_moe(), 2, 0)); });
  EXPECT_NE(e.find("parallel.ep"), std::string::npos) << e;
  // An attention-only model has no layers to split.
  e = test::input_error_of([] { scenario_of({{"head_dim", 64}, {"num_q_heads", 4}, {"num_kv_heads", 2}, {"parallel", {{"ep", 2}}}}); });
  EXPECT_NE(e.find("parallel.ep"), std::string::npos) << e;
  EXPECT_NE(e.find("needs a whole model"), std::string::npos) << e;
  // More chips than the system has: the split names ep, the hardware its chip count.
  e = test::input_error_of([] { test::timing_only_run(scenario_of(with_split(small_moe(), 2, 2)), test::system_of_chips(1)); });
  EXPECT_NE(e.find("model.parallel.tp = 2, ep = 2 needs 2 chips"), std::string::npos) << e;
  EXPECT_NE(e.find("system.chips = 1"), std::string::npos) << e;
}

TEST(ExpertParallel, AStepsAllToAllsAreTheCollectivesOnTheNetworkAndMatchTheClosedForm) {
  const HwConfig hw = test::system_of_chips(2);
  const RunOutput run = test::timing_only_run(scenario_of(with_split(small_moe(), 2, 2)), hw);
  const Json a = to_json(run.summary);
  Parallelism split;
  split.tp = split.ep = 2;
  SystemCollectives net(hw, "hw", split);
  const SystemNetworkSpec spec = SystemNetworkSpec::from_config(hw, "hw");
  const int layers = 2, steps = int(a["steps"].size());
  ASSERT_GT(steps, 2);
  for (const Json& s : a["steps"]) {
    const Json& l = s["layers"];
    const int rows = l["rows"];
    // Each rank dispatches its ceil(rows / 2) rows' 2 copies of 256 fp16 elements; the combine the same.
    const uint64_t S = uint64_t((rows + 1) / 2) * 2 * 256 * 2;
    CollectiveSpec c;
    c.kind = CollectiveKind::all_to_all;
    c.algo = CollectiveAlgo::direct;
    c.ranks = {0, 1};
    c.bytes = S;
    const CollectiveRun alone = run_collectives(system_network_registry(), spec, {c});
    ASSERT_TRUE(alone.alpha_beta.has_value());
    const double closed = collective_closed_form_ns(c.kind, c.algo, 2, double(S), *alone.alpha_beta);
    const double a2a = l["ep_all_to_all_ns"].get<double>();
    EXPECT_NEAR(a2a, layers * 2 * net.ns(CollectiveKind::all_to_all, S), 1e-9 * a2a) << s["label"];
    EXPECT_NEAR(a2a, layers * 2 * closed, 0.01 * layers * 2 * closed) << s["label"];  // 1%: the collective tests' tolerance
    const double gather = l["ep_all_gather_ns"].get<double>();
    EXPECT_NEAR(gather, layers * net.ns(CollectiveKind::all_gather, uint64_t((rows + 1) / 2) * 2 * 256 * 2), 1e-9 * gather);
    // No down_proj all-reduce under EP: one all-reduce a layer (o_proj's) and the logits' all-gather.
    const double tp = layers * net.ns(CollectiveKind::all_reduce, uint64_t(rows) * 256 * 2) +
                      net.ns(CollectiveKind::all_gather, uint64_t(int(l["lm_head_rows"])) * 1000 * 2);
    EXPECT_NEAR(l["tp_collectives_ns"].get<double>(), tp, 1e-9 * tp) << s["label"];
    // The step: its operators, attention and every collective.
    const double sum = l["operators_ns"].get<double>() + l["attention_ns"].get<double>() + tp + a2a + gather;
    EXPECT_NEAR(s["ns"].get<double>(), sum, 1e-6 * sum) << s["label"];
  }
  // Spans on the operator track: a dispatch, a combine and an all-gather per layer per step; one all-reduce.
  std::map<std::string, int> spans;
  for (const Span& sp : run.sim.spans->spans()) spans[run.sim.spans->name(sp.component)]++;
  EXPECT_EQ(spans["runtime.layer.ep_dispatch"], layers * steps);
  EXPECT_EQ(spans["runtime.layer.ep_combine"], layers * steps);
  EXPECT_EQ(spans["runtime.layer.ep_all_gather"], layers * steps);
  EXPECT_EQ(spans["runtime.layer.tp_all_reduce"], layers * steps);
  const Json& ep = a["operators"]["expert_parallel"];
  EXPECT_EQ(ep["ep"], 2);
  EXPECT_EQ(ep["experts_per_chip"], 2);
  EXPECT_EQ(ep["all_to_all"]["calls"], 2 * layers * steps);
  EXPECT_EQ(ep["rows_all_gather"]["calls"], layers * steps);
  // Every routed row lands on one rank's experts; the timed (slowest) rank's rows are by_operator's.
  uint64_t ranks = 0, routed = 0;
  for (const Json& r : ep["ranks"]) ranks += r["rows"].get<uint64_t>();
  for (const auto& n : a["operators"]["moe"]["expert_rows"]) routed += n.get<uint64_t>();
  EXPECT_EQ(ranks, routed);
  for (const Json& o : a["operators"]["by_operator"]) {
    if (o["name"] == "gate_up_proj") {
      EXPECT_EQ(o["rows"], ep["simulated_rank_rows"]);
    }
  }
  EXPECT_EQ(a["config"]["scenario"]["model"]["parallel"]["ep"], 2);
  EXPECT_EQ(a["config"]["scenario"]["model"]["parallel"]["tp"], 2);
}

TEST(ExpertParallel, EpOneIsTheRunWithoutIt) {
  // ep = 1 written out or left out: the same outputs, Mixtral's and a small model's.
  HwConfig hw;
  hw.groups = 2;  // Mixtral's 93.4 GB on one chip
  const Json absent = to_json(test::timing_only_run(scenario_of(mixtral(nullptr), 16, 1), hw).summary);
  const Json one = to_json(test::timing_only_run(scenario_of(mixtral({{"ep", 1}}), 16, 1), hw).summary);
  EXPECT_EQ(absent.dump(), one.dump());
  EXPECT_FALSE(one["operators"].contains("expert_parallel"));
  const HwConfig two = test::system_of_chips(2);
  Json tp2 = small_moe();
  tp2["parallel"] = {{"tp", 2}};
  const Json a = to_json(test::timing_only_run(scenario_of(tp2), two).summary);
  tp2["parallel"]["ep"] = 1;
  const Json b = to_json(test::timing_only_run(scenario_of(tp2), two).summary);
  EXPECT_EQ(a.dump(), b.dump());
}

TEST(ExpertParallel, MixtralsExpertTimeFallsWithEpWhileTheAllToAllShareGrows) {
  // Mixtral-8x7B with tp = ep = 2, 4, 8 on 8 chips of the default chip (one group each): each chip
  // holds 4, 2, 1 experts of every layer, so the slowest rank's expert GEMMs take less time; the
  // all-to-alls (dispatch and combine of a decode step's rows) become a larger share of the step.
  const HwConfig hw = test::system_of_chips(8);
  double last_experts = 0, last_share = 0;
  for (int ep : {2, 4, 8}) {
    const Json a = to_json(test::timing_only_run(scenario_of(mixtral({{"tp", ep}, {"ep", ep}}), 16, 1), hw).summary);
    double experts = 0;
    for (const Json& o : a["operators"]["by_operator"])
      if (o["name"] == "gate_up_proj" || o["name"] == "down_proj") experts += o["time_ns"].get<double>();
    const Json& decode = a["steps"].back();
    ASSERT_EQ(decode["phase"], "decode");
    const double share = decode["layers"]["ep_all_to_all_ns"].get<double>() / decode["ns"].get<double>();
    EXPECT_GT(share, 0.0) << ep;
    if (ep > 2) {
      EXPECT_LT(experts, 0.75 * last_experts) << ep;
      EXPECT_GT(share, last_share) << ep;
    }
    last_experts = experts, last_share = share;
  }
}
