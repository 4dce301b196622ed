// Tensor parallelism over a system of chips (issue 39; runtime/model/parallel.h,
// runtime/step/system_collectives.h, docs/system.md): each rank runs a shard of every layer,
// and every layer adds two all-reduces timed on the system network.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "hw/common/base/error.h"
#include "runtime/model/parallel.h"
#include "runtime/run/driver.h"
#include "runtime/scenario/scenario.h"
#include "runtime/step/system_collectives.h"
#include "test_model_support.h"
#include "test_runtime_support.h"
#include "test_support.h"

using namespace ahbm;

namespace {

// The small model of test_model_layers.cpp: hidden 256, 4 heads of 64, 2 KV heads, FFN 512.
Json small_model(int layers = 2) {
  return Json{{"hidden_size", 256}, {"intermediate_size", 512}, {"num_attention_heads", 4},
              {"num_key_value_heads", 2}, {"num_hidden_layers", layers}, {"vocab_size", 1000},
              {"head_dim", 64}, {"dtype", "fp16"}};
}

Scenario scenario_of(const Json& model, uint64_t seed = 3) {
  const Json j = {{"name", "tp"},
                  {"model", model},
                  {"shared_prefix_tokens", 64},
                  {"seed", seed},
                  {"agents", {{{"name", "a0"}, {"new_tokens", 4}}, {{"name", "a1"}, {"new_tokens", 4}}}},
                  {"phases", {{{"type", "prefill"}, {"tokens", 32}}, {{"type", "fanout"}}, {{"type", "decode"}, {"steps", 2}}}}};
  return parse_scenario(j, "tp.json");
}

Json with_tp(Json model, int tp) {
  model["parallel"] = {{"tp", tp}};
  return model;
}

HwConfig system_of(int chips) {
  HwConfig hw;
  hw.system.chips = chips;
  return hw;
}

std::string input_error(const std::function<void()>& f) { return test::input_error_of(f); }

ModelConfig load(const std::string& name) { return load_model_config(test::source_path("traces/models/" + name + ".json")); }

}  // namespace

TEST(TensorParallel, ShardsSplitHeadsFfnAndVocabAndReplicateNorms) {
  const ModelConfig m = load("llama-3-70b");
  const ModelConfig s = tensor_parallel_shard(m, 8);
  EXPECT_EQ(s.num_attention_heads, 8);
  EXPECT_EQ(s.num_key_value_heads, 1);
  EXPECT_EQ(s.intermediate_size, 3584);
  EXPECT_EQ(s.vocab_size, 16032);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.hidden_size, 8192);
  // Every layer tensor is split in 8 except the two norm vectors, which each rank holds whole.
  EXPECT_EQ(8 * layer_params(s), layer_params(m) + 7 * 2 * m.hidden_size);
  // 16 ranks over 8 KV heads: each KV head lives on two ranks (K and V projections twice).
  const ModelConfig r = tensor_parallel_shard(m, 16);
  EXPECT_EQ(r.num_key_value_heads, 1);
  EXPECT_EQ(16 * layer_params(r),
            layer_params(m) + 15 * 2 * m.hidden_size + 2 * m.hidden_size * m.kv_dim());
  // Vocabulary rounded up: 32000 / 3 is not whole.
  ModelConfig odd = test::small_model_config();
  odd.num_attention_heads = 6, odd.num_key_value_heads = 3, odd.intermediate_size = 600, odd.vocab_size = 32000;
  EXPECT_EQ(tensor_parallel_shard(odd, 3).vocab_size, 10667);
  EXPECT_EQ(tensor_parallel_shard(m, 1).num_attention_heads, 64);
}

TEST(TensorParallel, SplitsThatDoNotExistAreInputErrorsNamingTheField) {
  const ModelConfig m = load("llama-3-70b");
  EXPECT_EQ(tensor_parallel_problem(m, 8), "");
  EXPECT_NE(tensor_parallel_problem(m, 3).find("does not divide num_attention_heads = 64"), std::string::npos);
  ModelConfig g = test::small_model_config();  // 4 heads, 2 KV heads, FFN 512
  g.num_attention_heads = 12, g.num_key_value_heads = 6, g.head_dim = 64;
  EXPECT_NE(tensor_parallel_problem(g, 4).find("num_key_value_heads = 6 are not multiples"), std::string::npos);
  g.intermediate_size = 501;
  EXPECT_NE(tensor_parallel_problem(g, 2).find("does not divide intermediate_size = 501"), std::string::npos);

  std::string e = input_error([] { scenario_of(with_tp(small_model(), 3)); });
  EXPECT_NE(e.find("model.parallel.tp"), std::string::npos) << e;
  EXPECT_NE(e.find("value 3 does not divide num_attention_heads = 4"), std::string::npos) << e;
  e = input_error([] { scenario_of(with_tp(small_model(), 0)); });
  EXPECT_NE(e.find("parallel.tp"), std::string::npos) << e;
  e = input_error([] {
    scenario_of({{"head_dim", 64}, {"num_q_heads", 4}, {"num_kv_heads", 2}, {"parallel", {{"tp", 2}}}});
  });
  EXPECT_NE(e.find("needs a whole model"), std::string::npos) << e;
  // Two ranks on a one-chip system.
  e = input_error([] { test::timing_only_run(scenario_of(with_tp(small_model(), 2))); });
  EXPECT_NE(e.find("system.chips = 1"), std::string::npos) << e;
  EXPECT_NE(e.find("needs 2 chips"), std::string::npos) << e;
}

TEST(TensorParallel, ARanksStepIsItsShardsStepPlusTheCollectivesOnTheNetwork) {
  const HwConfig hw = system_of(2);
  const RunOutput tp = test::timing_only_run(scenario_of(with_tp(small_model(), 2)), hw);
  // The shard run as a model of its own: 2 heads, 1 KV head, FFN 256, vocabulary 500.
  Json shard = small_model();
  shard["num_attention_heads"] = 2, shard["num_key_value_heads"] = 1, shard["intermediate_size"] = 256,
  shard["vocab_size"] = 500;
  const RunOutput alone = test::timing_only_run(scenario_of(shard), hw);
  const Json a = to_json(tp.summary), b = to_json(alone.summary);
  ASSERT_EQ(a["steps"].size(), b["steps"].size());
  SystemCollectives net(hw, "hw", Parallelism{2, 1});
  double collectives = 0;
  for (size_t i = 0; i < a["steps"].size(); ++i) {
    const Json& sa = a["steps"][i];
    const Json& sb = b["steps"][i];
    const int rows = sa["layers"]["rows"], logits = sa["layers"]["lm_head_rows"];
    // 2 layers x 2 all-reduces of rows x 256 x 2 bytes, and the logits' all-gather (1000 x 2 bytes a row).
    const double expect = 2 * 2 * net.ns(CollectiveKind::all_reduce, uint64_t(rows) * 256 * 2) +
                          net.ns(CollectiveKind::all_gather, uint64_t(logits) * 1000 * 2);
    EXPECT_GT(expect, 0.0);
    EXPECT_NEAR(sa["layers"]["tp_collectives_ns"].get<double>(), expect, 1e-9 * expect) << sa["label"];
    EXPECT_NEAR(sa["ns"].get<double>(), sb["ns"].get<double>() + expect, 1e-6 * sa["ns"].get<double>()) << sa["label"];
    EXPECT_EQ(sa["layers"]["operators_ns"], sb["layers"]["operators_ns"]) << sa["label"];
    EXPECT_EQ(sa["layers"]["attention_ns"], sb["layers"]["attention_ns"]) << sa["label"];
    collectives += expect;
  }
  EXPECT_NEAR(a["total_ns"].get<double>(), b["total_ns"].get<double>() + collectives, 1e-6 * a["total_ns"].get<double>());
  // One all-reduce span after o_proj and after down_proj of every layer of every step.
  std::map<std::string, int> spans;
  for (const Span& sp : tp.sim.spans->spans()) spans[tp.sim.spans->name(sp.component)]++;
  const int steps = int(a["steps"].size());
  EXPECT_EQ(spans["runtime.layer.tp_all_reduce"], 2 * 2 * steps);
  EXPECT_EQ(spans["runtime.tp_logits_all_gather"], steps);
  const Json& t = a["operators"]["tensor_parallel"];
  EXPECT_EQ(t["tp"], 2);
  EXPECT_EQ(t["all_reduce"]["calls"], 2 * 2 * steps);
  // The scenario echo keeps the whole model and the split.
  EXPECT_EQ(a["config"]["scenario"]["model"]["num_attention_heads"], 4);
  EXPECT_EQ(a["config"]["scenario"]["model"]["parallel"]["tp"], 2);
}

TEST(TensorParallel, ARanksTimeDoesNotDependOnItsValues) {
  // One rank stands for all (summary operators.tensor_parallel.ranks_simulated = 1): every rank runs
  // a shard of the same shapes on its own heads' data, and the simulated time depends on shapes
  // only. Two seeds (two ranks' data) with values computed: the same times.
  RunOptions opt = test::in_memory_options();
  const HwConfig hw = system_of(2);
  const RunOutput r0 = execute(scenario_of(with_tp(small_model(1), 2), 3), hw, opt);
  const RunOutput r1 = execute(scenario_of(with_tp(small_model(1), 2), 4), hw, opt);
  EXPECT_EQ(r0.summary.total_ns, r1.summary.total_ns);
  const Json a = to_json(r0.summary), b = to_json(r1.summary);
  for (size_t i = 0; i < a["steps"].size(); ++i) EXPECT_EQ(a["steps"][i]["ns"], b["steps"][i]["ns"]);
}

TEST(TensorParallel, AShardThatDoesNotFitIsRefusedWithOneChipsNumbers) {
  // LLaMA-3-70B over 2 chips: 35.3e9 parameters (70.6 GB in fp16) per chip, against 1 GiB x 32 PEs.
  HwConfig hw = system_of(2);
  hw.pe.hbm.capacity_bytes = uint64_t(1) << 30;
  Json model = {{"config", test::source_path("traces/models/llama-3-70b.json")}, {"dtype", "fp16"}, {"parallel", {{"tp", 2}}}};
  const std::string e = input_error([&] { test::timing_only_run(scenario_of(model), hw); });
  EXPECT_NE(e.find("each chip of the split model.parallel.tp = 2"), std::string::npos) << e;
  EXPECT_NE(e.find("model weights do not fit"), std::string::npos) << e;
  EXPECT_NE(e.find("35277512704 parameters"), std::string::npos) << e;  // one chip's, not the model's 70.55e9
  EXPECT_NE(e.find("or split over more chips"), std::string::npos) << e;
}

TEST(TensorParallel, TheAllReduceRunsTheScenariosAlgorithm) {
  // model.parallel.all_reduce = tree: every all-reduce is the tree's on the network, not the ring's.
  const HwConfig hw = system_of(2);
  Json model = with_tp(small_model(), 2);
  model["parallel"]["all_reduce"] = "tree";
  const Json a = to_json(test::timing_only_run(scenario_of(model), hw).summary);
  Parallelism tree{2, 1};
  tree.all_reduce = CollectiveAlgo::tree;
  SystemCollectives on_tree(hw, "hw", tree), on_ring(hw, "hw", Parallelism{2, 1});
  for (const Json& s : a["steps"]) {
    const int rows = s["layers"]["rows"], logits = s["layers"]["lm_head_rows"];
    const uint64_t S = uint64_t(rows) * 256 * 2;
    const double expect = 2 * 2 * on_tree.ns(CollectiveKind::all_reduce, S) +
                          on_tree.ns(CollectiveKind::all_gather, uint64_t(logits) * 1000 * 2);
    EXPECT_NEAR(s["layers"]["tp_collectives_ns"].get<double>(), expect, 1e-9 * expect) << s["label"];
    EXPECT_NE(on_tree.ns(CollectiveKind::all_reduce, S), on_ring.ns(CollectiveKind::all_reduce, S));
  }
  EXPECT_EQ(a["operators"]["tensor_parallel"]["network"]["all_reduce"], "tree");
  EXPECT_EQ(a["config"]["scenario"]["model"]["parallel"]["all_reduce"], "tree");
  // An algorithm the all-reduce does not have, and halving-doubling over 3 ranks.
  model["parallel"]["all_reduce"] = "direct";
  std::string e = input_error([&] { scenario_of(model); });
  EXPECT_NE(e.find("model.parallel.all_reduce"), std::string::npos) << e;
  EXPECT_NE(e.find("ring, tree, halving_doubling"), std::string::npos) << e;
  Json three = small_model();
  three["num_attention_heads"] = 6, three["num_key_value_heads"] = 3, three["hidden_size"] = 384,
  three["intermediate_size"] = 768;
  three["parallel"] = {{"tp", 3}, {"all_reduce", "halving_doubling"}};
  e = input_error([&] { scenario_of(three); });
  EXPECT_NE(e.find("needs tp to be a power of two, and tp = 3"), std::string::npos) << e;
}
