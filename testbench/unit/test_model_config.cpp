// Whole-model descriptions (runtime/model/config.h): the shipped configs' parameter counts
// against the closed form written out here independently, scenario parsing (config file or
// inline fields; the attention core's head counts derived from them), and errors naming the
// field, the value and the allowed range.
#include <functional>

#include <gtest/gtest.h>

#include "hw/common/base/error.h"
#include "runtime/model/config.h"
#include "runtime/scenario/scenario.h"
#include "test_support.h"

using namespace ahbm;

namespace {

ModelConfig load_model(const std::string& name) {
  return load_model_config(test::source_path("traces/models/" + name + ".json"));
}

// The LLaMA-family parameter count, written out from the architecture (not from
// layer_weights): per layer Q (h x H d), K and V (h x KV d each), O (H d x h), optional Q/K/V
// biases, E experts of gate, up (h x f) and down (f x h), an h x E router when E > 1, two RMSNorm
// weight vectors (h); then the embedding (V x h), the final norm (h) and an untied LM head (h x V).
int64_t closed_form_params(int64_t h, int64_t f, int64_t H, int64_t KV, int64_t d, int64_t L, int64_t V, bool tied,
                           bool bias, int64_t E) {
  const int64_t attn = h * H * d + 2 * h * KV * d + H * d * h + (bias ? H * d + 2 * KV * d : 0);
  const int64_t ffn = E * 3 * h * f + (E > 1 ? h * E : 0);
  return L * (attn + ffn + 2 * h) + V * h * (tied ? 1 : 2) + h;
}

Json small_inline() {
  return Json::parse(R"({"hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
                         "num_hidden_layers": 2, "vocab_size": 1000})");
}

Json scenario_with(const Json& model) {
  Json j = Json::parse(R"({"name": "t", "shared_prefix_tokens": 100, "agents": [{"name": "a", "new_tokens": 3}]})");
  j["model"] = model;
  return j;
}

std::string error_of(const Json& j, const std::string& file = "s.json") {
  try {
    parse_scenario(j, file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ModelConfig, ShippedConfigsMatchTheClosedFormAndPublishedSizes) {
  struct Case {
    const char* name;
    int64_t expect;     // closed form with the public dimensions typed in here
    double published;   // the model card's rounded size
  };
  const std::vector<Case> cases = {
      {"llama-3-8b", closed_form_params(4096, 14336, 32, 8, 128, 32, 128256, false, false, 1), 8.03e9},
      {"mistral-7b", closed_form_params(4096, 14336, 32, 8, 128, 32, 32768, false, false, 1), 7.25e9},
      {"qwen2.5-7b", closed_form_params(3584, 18944, 28, 4, 128, 28, 152064, false, true, 1), 7.62e9},
      {"mixtral-8x7b", closed_form_params(4096, 14336, 32, 8, 128, 32, 32000, false, false, 8), 46.7e9},
      {"llama-3.2-1b", closed_form_params(2048, 8192, 32, 8, 64, 16, 128256, true, false, 1), 1.24e9},
      // The many-chip models (issue 39): too large for one chip's HBM at 16 bits.
      {"llama-3-70b", closed_form_params(8192, 28672, 64, 8, 128, 80, 128256, false, false, 1), 70.55e9},
      {"qwen2.5-72b", closed_form_params(8192, 29568, 64, 8, 128, 80, 152064, false, true, 1), 72.7e9},
      {"llama-2-7b", closed_form_params(4096, 11008, 32, 32, 128, 32, 32000, false, false, 1), 6.74e9},
      {"llama-2-13b", closed_form_params(5120, 13824, 40, 40, 128, 40, 32000, false, false, 1), 13.02e9},
      {"llama-2-70b", closed_form_params(8192, 28672, 64, 8, 128, 80, 32000, false, false, 1), 68.98e9},
      {"mixtral-8x22b", closed_form_params(6144, 16384, 48, 8, 128, 56, 32000, false, false, 8), 140.6e9},
  };
  for (const Case& c : cases) {
    const ModelConfig m = load_model(c.name);
    EXPECT_EQ(total_params(m), c.expect) << c.name;
    EXPECT_NEAR(double(total_params(m)), c.published, 0.005e9 * (c.published > 1e10 ? 10 : 1)) << c.name;
  }
  EXPECT_EQ(total_params(load_model("llama-3-8b")), 8030261248);
  EXPECT_EQ(total_params(load_model("mixtral-8x7b")), 46702792704);
  EXPECT_EQ(total_params(load_model("llama-3-70b")), 70553706496);
  EXPECT_EQ(total_params(load_model("llama-2-7b")), 6738415616);
  EXPECT_EQ(active_params(load_model("mixtral-8x22b")), 39152031744);
}

TEST(ModelConfig, MoeActiveParametersCountTopKExperts) {
  const ModelConfig m = load_model("mixtral-8x7b");
  // Active per token: the dense model with 2 experts' FFN, plus the router.
  const int64_t two_expert = closed_form_params(4096, 14336, 32, 8, 128, 32, 32000, false, false, 2);
  const int64_t router_diff = 32 * (4096 * 8 - 4096 * 2);  // the closed form's router has E = 2 columns
  EXPECT_EQ(active_params(m), two_expert + router_diff);
  EXPECT_EQ(active_params(load_model("llama-3-8b")), total_params(load_model("llama-3-8b")));
}

TEST(ModelConfig, DerivedHeadDimAndDefaults) {
  Json j = small_inline();
  JsonReader r(j, "m.json");
  const ModelConfig m = read_model_config(r);
  r.finish();
  EXPECT_EQ(m.head_dim, 64);                 // 256 / 4
  EXPECT_EQ(m.num_key_value_heads, 4);       // defaults to the query heads (no GQA)
  EXPECT_EQ(m.hidden_act, HiddenAct::silu);
  EXPECT_FALSE(m.tie_word_embeddings);
  EXPECT_FALSE(m.moe());
  EXPECT_EQ(layer_params(m), closed_form_params(256, 512, 4, 4, 64, 1, 0, false, false, 1) - 256);
}

TEST(ModelConfig, ScenarioDerivesTheAttentionCoreFromTheModel) {
  const Scenario sc = load_scenario(test::source_path("traces/llama3_8b.json"));
  ASSERT_TRUE(sc.model.full);
  EXPECT_EQ(sc.model.num_q_heads, 32);
  EXPECT_EQ(sc.model.num_kv_heads, 8);
  EXPECT_EQ(sc.model.head_dim, 128);
  EXPECT_EQ(sc.model.layers, 32);
  EXPECT_EQ(sc.model.dtype, DType::fp16);
  EXPECT_EQ(sc.model.config_file, test::source_path("traces/models/llama-3-8b.json"));
  // The echo inlines the resolved fields and parses to the same scenario.
  const Json echo = to_json(sc);
  EXPECT_FALSE(echo["model"].contains("config"));
  EXPECT_EQ(echo["model"]["rope_theta"].get<double>(), 500000.0);
  EXPECT_EQ(to_json(parse_scenario(echo, "echo.json")), echo);
  // The same model given inline is the same scenario.
  Json inline_model = load_json_file(test::source_path("traces/models/llama-3-8b.json"));
  inline_model["dtype"] = "fp16";
  Json j = load_json_file(test::source_path("traces/llama3_8b.json"));
  j["model"] = inline_model;
  EXPECT_EQ(to_json(parse_scenario(j, "inline.json")), echo);
}

TEST(ModelConfig, ConfigPathResolvesRelativeToTheScenarioThenTraces) {
  const std::string dir = test::temp_dir("model-config");
  test::write_temp(dir + "/models", "tiny.json", small_inline().dump());
  const Json j = scenario_with({{"config", "models/tiny.json"}});
  EXPECT_EQ(error_of(j, dir + "/s.json"), "");
  EXPECT_EQ(parse_scenario(j, dir + "/s.json").model.config_file, dir + "/models/tiny.json");
  // Not next to the scenario: traces/ under the working directory is tried, both are named.
  const std::string e = error_of(scenario_with({{"config", "models/none.json"}}), dir + "/s.json");
  EXPECT_NE(e.find("model.config: file \"models/none.json\" not found"), std::string::npos) << e;
  EXPECT_NE(e.find(dir + "/models/none.json"), std::string::npos) << e;
  EXPECT_NE(e.find("traces/models/none.json"), std::string::npos) << e;
  // An error inside the config file names that file and the field.
  test::write_temp(dir + "/models", "bad.json", R"({"hidden_size": 256, "intermediate_size": 512,
      "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 1000, "hidden_act": "relu"})");
  const std::string b = error_of(scenario_with({{"config", "models/bad.json"}}), dir + "/s.json");
  EXPECT_NE(b.find(dir + "/models/bad.json: hidden_act: unknown value \"relu\" (allowed: silu, gelu, gelu_pytorch_tanh)"),
            std::string::npos) << b;
  std::filesystem::remove_all(dir);
}

TEST(ModelConfig, ErrorsNameFieldValueAndRange) {
  struct Case {
    const char* what;
    std::function<void(Json&)> edit;
    std::vector<std::string> expect;
  };
  const std::vector<Case> cases = {
      {"unknown field", [](Json& m) { m["num_experts"] = 8; }, {"s.json: model.num_experts: unknown key"}},
      {"misspelt field", [](Json& m) { m["rope_thetta"] = 1e4; }, {"model.rope_thetta: unknown key", "did you mean \"model.rope_theta\""}},
      {"heads do not divide hidden", [](Json& m) { m["num_attention_heads"] = 3; },
       {"model.num_attention_heads: value 3 does not divide hidden_size = 256", "head_dim is not given"}},
      {"given head_dim lifts divisibility", [](Json& m) { m["num_attention_heads"] = 3; m["head_dim"] = 80; }, {}},
      {"kv heads do not divide", [](Json& m) { m["num_key_value_heads"] = 3; },
       {"model.num_key_value_heads: value 3 does not divide num_attention_heads = 4"}},
      {"kv heads above heads", [](Json& m) { m["num_key_value_heads"] = 8; },
       {"model.num_key_value_heads: value 8 is out of range (allowed: [1, 4])"}},
      {"experts per token above experts", [](Json& m) { m["num_local_experts"] = 8; m["num_experts_per_tok"] = 9; },
       {"model.num_experts_per_tok: value 9 is out of range (allowed: [1, 8])"}},
      {"experts per token without experts", [](Json& m) { m["num_experts_per_tok"] = 2; },
       {"model.num_experts_per_tok: value 2 is out of range (allowed: [1, 1])"}},
      {"MoE needs experts per token", [](Json& m) { m["num_local_experts"] = 8; },
       {"model.num_experts_per_tok: missing required field"}},
      {"hidden_act", [](Json& m) { m["hidden_act"] = "relu"; },
       {"model.hidden_act: unknown value \"relu\" (allowed: silu, gelu, gelu_pytorch_tanh)"}},
      {"derived head_dim too large", [](Json& m) { m["hidden_size"] = 8192; m["num_attention_heads"] = 4; },
       {"model.hidden_size: value 8192 gives head_dim = hidden_size / num_attention_heads = 2048", "[1, 1024]"}},
      {"eps range", [](Json& m) { m["rms_norm_eps"] = 0; }, {"model.rms_norm_eps: value 0 is out of range"}},
      {"vocab range", [](Json& m) { m["vocab_size"] = 0; }, {"model.vocab_size: value 0 is out of range (allowed: [1, 16777216])"}},
      {"missing layers", [](Json& m) { m.erase("num_hidden_layers"); }, {"model.num_hidden_layers: missing required field"}},
      {"attention-only name with a full model", [](Json& m) { m["num_q_heads"] = 4; },
       {"model.num_q_heads: not allowed with a full model description", "num_attention_heads"}},
      {"layers with a full model", [](Json& m) { m["layers"] = 4; }, {"model.layers: not allowed", "num_hidden_layers"}},
      {"config next to fields", [](Json& m) { m["config"] = "models/llama-3-8b.json"; },
       {"model.hidden_size: not allowed next to \"config\""}},
      {"empty config", [](Json& m) { m = {{"config", ""}}; }, {"model.config: must not be empty"}},
      {"metadata is accepted", [](Json& m) { m["architectures"] = {"LlamaForCausalLM"}; m["torch_dtype"] = "bfloat16"; }, {}},
  };
  ASSERT_EQ(error_of(scenario_with(small_inline())), "");
  for (const Case& c : cases) {
    Json m = small_inline();
    c.edit(m);
    const std::string e = error_of(scenario_with(m));
    if (c.expect.empty()) EXPECT_EQ(e, "") << c.what;
    else EXPECT_NE(e, "") << c.what;
    for (const auto& s : c.expect) EXPECT_NE(e.find(s), std::string::npos) << c.what << ": " << e;
  }
}
