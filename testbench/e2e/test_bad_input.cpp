// Hostile input through the real command line: every case runs `ahbm-sim` (AHBM_CLI) on a bad
// hardware config, scenario or option and checks that it exits 2, that stderr names the file,
// the field path, the value and what is allowed, and that --out was not created (or, when it
// already existed, was left untouched). docs/reliability.md tabulates these cases by id; a test
// below keeps that table in step with this list.
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_reliability_support.h"

using namespace ahbm::test;

namespace {

#ifdef __SANITIZE_ADDRESS__
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

// A small valid scenario and the placeholders a case's text may use.
const char* kScenario = R"({"name": "small", "model": {"head_dim": 64}, "shared_prefix_tokens": 1024,
  "agents": [{"name": "a", "new_tokens": 4}, {"name": "b", "new_tokens": 4}]})";

// A scenario whose model block is a small whole model (32 heads of 128), with the fields of the
// JSON object `extra` added or replaced.
std::string model_scenario(const std::string& extra) {
  nlohmann::json model = nlohmann::json::parse(R"({"hidden_size": 4096, "intermediate_size": 1024,
     "num_attention_heads": 32, "num_hidden_layers": 1, "vocab_size": 1000})");
  model.update(nlohmann::json::parse("{" + extra + "}"));
  nlohmann::json sc = nlohmann::json::parse(R"({"name": "m", "shared_prefix_tokens": 64, "agents": [{"name": "a", "new_tokens": 1}]})");
  sc["model"] = model;
  return sc.dump();
}

// A scenario naming a model config file.
std::string config_scenario(const std::string& path, const std::string& dtype = "fp16") {
  return R"({"name": "m", "model": {"config": ")" + path + R"(", "dtype": ")" + dtype + R"("}, "shared_prefix_tokens": 64,
     "agents": [{"name": "a", "new_tokens": 1}]})";
}

struct BadInput {
  std::string id;
  std::string hw;        // hw.json contents; "" = no --hw (built-in defaults)
  std::string scenario;  // sc.json contents; "" = kScenario
  std::string args;      // "" = "{sc} --hw {hw} --out {out}" (without --hw when hw is "")
  std::vector<std::string> expect;  // substrings stderr must contain
  std::string command = "run";      // the ahbm-sim command ("" = none: args start with the option)
  // More files in the scratch directory: name, contents ({src} = the source tree); the contents
  // "<fifo>" make a named pipe (a reader that opens it would wait forever).
  std::vector<std::pair<std::string, std::string>> files = {};
};

// A serve workload over `csv` (a path relative to the workload, or absolute) as Azure trace, with
// `extra` fields added.
std::string csv_workload(const std::string& csv, const std::string& extra = "") {
  return R"({"name": "w", "scenario": "{src}/traces/serve/small_attn.json", "arrival": {"process": "azure_csv", "file": ")" +
         csv + "\"}" + extra + "}";
}
// One workflow of a 1500-token prompt and 8 branches planned apart (batch_branches false) under
// attention `policy`.
std::string unbatched_workload(const std::string& policy) {
  return R"({"name": "w", "scenario": "{src}/traces/serve/small_attn.json",
    "arrival": {"process": "timestamps", "times_ns": [0]},
    "templates": [{"name": "t", "prompt_tokens": 1500, "rounds": 1,
      "fanout": {"branches": 8, "new_tokens": 16, "decode_tokens": 2}, "answer_tokens": 2}],
    "scheduler": {"attention_policy": ")" + policy + R"(", "batch_branches": false}})";
}
// A literal with its NUL bytes (std::string from a char* stops at the first).
template <size_t N>
std::string bytes(const char (&text)[N]) {
  return std::string(text, N - 1);
}
const char* kCsvHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
// A serve command on w.json (the workload) into {out}.
const char* kServe = "{dir}/w.json --out {out}";

void PrintTo(const BadInput& c, std::ostream* os) { *os << c.id; }  // ctest names show the id

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

std::string nested_arrays(int depth) { return std::string(size_t(depth), '[') + std::string(size_t(depth), ']'); }

const std::vector<BadInput>& cases() {
  static const std::vector<BadInput> list = {
      // ---- hardware config: keys, types, ranges ----
      {"hw.unknown_key", R"({"clock_gz": 2})", "", "", {"hw.json", "clock_gz: unknown key", "did you mean \"clock_ghz\""}},
      {"hw.unknown_nested_key", R"({"cube": {"q_bufer": {"bytes": 4096}}})", "", "",
       {"hw.json", "cube.q_bufer: unknown key", "did you mean \"cube.q_buffer\""}},
      {"hw.below_range", R"({"cube": {"q_buffer": {"bytes": 10}}})", "", "",
       {"hw.json", "cube.q_buffer.bytes", "value 10 is out of range", "[64, "}},
      {"hw.negative", R"({"pe": {"dma": {"buffers": -1}}})", "", "",
       {"hw.json", "pe.dma.buffers", "value -1", "[1, 8]"}},
      {"hw.zero_tile", R"({"pe": {"gemm": {"tile_m": 0}}})", "", "", {"hw.json", "pe.gemm.tile_m", "value 0", "[1, 1024]"}},
      {"hw.fraction_for_integer", R"({"pe": {"gemm": {"tile_n": 1.5}}})", "", "",
       {"hw.json", "pe.gemm.tile_n", "value 1.5 is not an integer", "[1, 1024]"}},
      {"hw.string_for_number", R"({"clock_ghz": "fast"})", "", "",
       {"hw.json", "clock_ghz", "value \"fast\" is not a number", "[0.01, 100]"}},
      {"hw.bool_for_integer", R"({"groups": true})", "", "", {"hw.json", "groups", "value true is not an integer"}},
      {"hw.null_value", R"({"clock_ghz": null})", "", "", {"hw.json", "clock_ghz", "value null is not a number"}},
      {"hw.huge_integer", R"({"pe": {"sram_bytes": 99999999999999999999999}})", "", "",
       {"hw.json", "pe.sram_bytes", "9.999999999999999e+22 is out of range", "[1024, 1125899906842624]"}},
      {"hw.uint64_max", R"({"pe": {"hbm": {"capacity_bytes": 18446744073709551615}}})", "", "",
       {"hw.json", "pe.hbm.capacity_bytes", "18446744073709551615 is out of range"}},
      {"hw.double_overflow", R"({"clock_ghz": 1e400})", "", "", {"hw.json", "number overflow", "1e400", "allowed"}},
      {"hw.bad_enum", R"({"group": {"link": {"topology": "mesh"}}})", "", "",
       {"hw.json", "group.link.topology", "\"mesh\"", "allowed: chain, ring, tree"}},
      {"hw.unknown_noc_model", R"({"noc": {"model": "idael"}})", "", "",
       {"hw.json", "noc.model", "\"idael\"", "allowed: ", "did you mean \"ideal\""}},
      {"hw.noc_params_type", R"({"noc": {"params": [1]}})", "", "", {"hw.json", "noc.params", "must be a JSON object"}},
      {"hw.noc_params_unknown", R"({"noc": {"params": {"latency_nss": 5}}})", "", "",
       {"hw.json", "noc.params.latency_nss: unknown key", "did you mean \"noc.params.latency_ns\""}},
      {"hw.section_not_object", R"({"pe": 5})", "", "", {"hw.json", "pe", "value 5 must be a JSON object"}},
      {"hw.top_level_array", "[1, 2]", "", "", {"hw.json", "top level must be a JSON object"}},
      // ---- hardware config: the file itself ----
      {"file.malformed", "{\"clock_ghz\": 1,\n}", "", "", {"hw.json:2:1", "malformed JSON"}},
      {"file.empty", "", "", "{sc} --hw {dir}/empty.json --out {out}", {"empty.json", "file is empty"}},
      {"file.missing", "", "", "{sc} --hw {dir}/nope.json --out {out}", {"nope.json", "cannot open file"}},
      {"file.directory", "", "", "{sc} --hw {dir} --out {out}", {"is a directory, not a JSON file"}},
      {"file.not_regular", "", "", "{sc} --hw /dev/null --out {out}", {"/dev/null", "is not a regular file"}},
      {"file.duplicate_key", R"({"clock_ghz": 1, "clock_ghz": 2})", "", "", {"hw.json", "clock_ghz: duplicate key"}},
      {"file.deep_nesting", R"({"noc": {"params": )" + nested_arrays(70) + "}}", "", "",
       {"hw.json", "noc.params", "nested deeper than 64 levels"}},
      {"file.invalid_utf8", "{\"noc\": {\"model\": \"\xff\"}}", "", "", {"hw.json:1:", "malformed JSON", "UTF-8"}},
      // ---- hardware config: fields inconsistent with each other ----
      {"hw.kv_tile_vs_tile_n", R"({"pe": {"dma": {"kv_tile_tokens": 24}}})", "", "",
       {"hw.json", "pe.dma.kv_tile_tokens = 24", "pe.gemm.tile_n = 16", "allowed: multiples"}},
      {"hw.kv_tile_vs_tile_k", R"({"pe": {"gemm": {"tile_n": 8, "tile_k": 32}, "dma": {"kv_tile_tokens": 16}}})", "",
       "", {"hw.json", "pe.dma.kv_tile_tokens = 16", "pe.gemm.tile_k = 32"}},
      {"hw.group_exceeds_chip", R"({"chip_cubes": 2})", "", "",
       {"hw.json", "group.cubes = 4", "chip_cubes = 2", "allowed: group.cubes <= chip_cubes"}},
      {"hw.groups_exceed_chip", R"({"chip_cubes": 8, "groups": 3})", "", "",
       {"hw.json", "groups = 3", "12 CUBEs exceed chip_cubes = 8", "allowed: groups <= 2"}},
      {"hw.fault_target_missing", R"({"fault_injection": {"drop_state_cube": 4}})", "", "",
       {"hw.json", "fault_injection.drop_state_cube = 4", "0 to 3"}},
      {"hw.noc_placement_missing_endpoint", R"({"noc": {"model": "mesh", "params": {"placement": {"g0.cube9": [0, 0]}}}})",
       "", "", {"hw.json", "noc.params.placement.g0.cube9: unknown endpoint", "g0.cube3", "did you mean \"g0.cube0\""}},
      // ---- scenario against hardware, caught before simulating ----
      {"fit.q_tile_vs_q_buffer", R"({"q_tile_rows": 8, "cube": {"q_buffer": {"bytes": 1024}}})", "", "",
       {"hw.json", "cube.q_buffer.bytes = 1024", "8-row Q tile (2048 bytes in fp32)"}},
      {"fit.no_q_tile_fits", R"({"cube": {"q_buffer": {"bytes": 1024}}})", "", "",
       {"no Q tile fits", "16 rows (pe.gemm.tile_m)", "cube.q_buffer.bytes = 1024"}},
      {"fit.sram", R"({"q_tile_rows": 16, "pe": {"sram_bytes": 65536}})", "", "",
       {"hw.json", "pe.sram_bytes = 65536 is too small for a 8-row Q tile", "KV slots 65536 B"}},
      {"fit.hbm_capacity", R"({"pe": {"hbm": {"capacity_bytes": 4096}}})", "", "",
       {"hw.json", "pe.hbm.capacity_bytes = 4096", "sc.json", "KV capacity exceeded", "holds 0 pages of 8192 bytes"}},
      {"fit.host_memory", R"({"pe": {"hbm": {"capacity_bytes": 1099511627776}}})",
       R"({"name": "huge", "model": {"head_dim": 1024}, "shared_prefix_tokens": 16777216,
           "agents": [{"name": "a", "new_tokens": 8}]})",
       "", {"sc.json", "shared_prefix_tokens = 16777216", "model.head_dim = 1024", "MiB of host memory", "--no-values"}},
      // ---- scenario ----
      {"sc.missing_field", "", R"({"name": "s", "model": {"head_dim": 64}, "shared_prefix_tokens": 64})", "",
       {"sc.json", "agents: missing required field"}},
      {"sc.no_agents", "", R"({"name": "s", "model": {"head_dim": 64}, "shared_prefix_tokens": 64, "agents": []})", "",
       {"sc.json", "agents", "has 0 elements (allowed: 1 to 4096)"}},
      {"sc.duplicate_agent", "",
       R"({"name": "s", "model": {"head_dim": 64}, "shared_prefix_tokens": 64,
           "agents": [{"name": "a", "new_tokens": 1}, {"name": "a", "new_tokens": 2}]})",
       "", {"sc.json", "agents[1].name", "\"a\" must be unique"}},
      {"sc.agent_name_chars", "",
       R"({"name": "s", "model": {"head_dim": 64}, "shared_prefix_tokens": 64, "agents": [{"name": "a,b", "new_tokens": 1}]})",
       "", {"sc.json", "agents[0].name", "\"a,b\" is not a valid name", "A-Z a-z 0-9 _ . -"}},
      {"sc.zero_new_tokens", "",
       R"({"name": "s", "model": {"head_dim": 64}, "shared_prefix_tokens": 64, "agents": [{"name": "a", "new_tokens": 0}]})",
       "", {"sc.json", "agents[0].new_tokens", "value 0", "[1, 65536]"}},
      {"sc.head_dim_range", "",
       R"({"name": "s", "model": {"head_dim": 5000}, "shared_prefix_tokens": 64, "agents": [{"name": "a", "new_tokens": 1}]})",
       "", {"sc.json", "model.head_dim", "value 5000", "[1, 1024]"}},
      {"sc.unknown_agent_key", "",
       R"({"name": "s", "model": {"head_dim": 64}, "shared_prefix_tokens": 64, "agents": [{"name": "a", "new_tokes": 1}]})",
       "", {"sc.json", "agents[0].new_tokens: missing required field", "the object has \"new_tokes\": misspelt?"}},
      {"sc.misspelt_optional_key", "",
       R"({"name": "s", "model": {"head_dim": 64}, "shared_prefix_tokens": 64, "sed": 3, "agents": [{"name": "a", "new_tokens": 1}]})",
       "", {"sc.json", "sed: unknown key", "did you mean \"seed\""}},
      {"sc.empty_name", "",
       R"({"name": "", "model": {"head_dim": 64}, "shared_prefix_tokens": 64, "agents": [{"name": "a", "new_tokens": 1}]})",
       "", {"sc.json", "name: must not be empty"}},
      {"sc.negative_seed", "",
       R"({"name": "s", "model": {"head_dim": 64}, "shared_prefix_tokens": 64, "seed": -3, "agents": [{"name": "a", "new_tokens": 1}]})",
       "", {"sc.json", "seed", "value -3", "[0, 9223372036854775807]"}},
      {"sc.string_for_integer", "",
       R"({"name": "s", "model": {"head_dim": 64}, "shared_prefix_tokens": "8k", "agents": [{"name": "a", "new_tokens": 1}]})",
       "", {"sc.json", "shared_prefix_tokens", "value \"8k\" is not an integer"}},
      {"sc.agent_not_object", "", R"({"name": "s", "model": {"head_dim": 64}, "shared_prefix_tokens": 64, "agents": [5]})",
       "", {"sc.json", "agents[0] must be a JSON object, got 5"}},
      // ---- scenario: whole model (docs/models.md) ----
      {"sc.model_unknown_field", "", model_scenario(R"("num_expert": 8)"), "", {"sc.json", "model.num_expert: unknown key"}},
      {"sc.model_heads_vs_hidden", "", model_scenario(R"("hidden_size": 4100)"), "",
       {"sc.json", "model.num_attention_heads: value 32 does not divide hidden_size = 4100", "head_dim is not given"}},
      {"sc.model_kv_heads", "", model_scenario(R"("num_key_value_heads": 5)"), "",
       {"sc.json", "model.num_key_value_heads: value 5 does not divide num_attention_heads = 32"}},
      {"sc.model_experts_per_tok", "", model_scenario(R"("num_local_experts": 8, "num_experts_per_tok": 9)"), "",
       {"sc.json", "model.num_experts_per_tok: value 9 is out of range (allowed: [1, 8])"}},
      {"sc.model_hidden_act", "", model_scenario(R"("hidden_act": "relu")"), "",
       {"sc.json", "model.hidden_act: unknown value \"relu\" (allowed: silu, gelu, gelu_pytorch_tanh)"}},
      {"sc.model_twice", "", model_scenario(R"("num_q_heads": 32)"), "",
       {"sc.json", "model.num_q_heads: not allowed with a full model description", "num_attention_heads"}},
      {"sc.model_config_missing", "", config_scenario("models/none.json"), "",
       {"sc.json", "model.config: file \"models/none.json\" not found", "traces/models/none.json"}},
      {"sc.model_config_bad_field", R"({"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
           "num_hidden_layers": 2, "vocab_size": 100, "rope_theta": 0})",
       config_scenario("hw.json"), "{sc} --out {out}", {"hw.json: rope_theta: value 0 is out of range (allowed: [1, 1e+12])"}},
      {"fit.model_weights", R"({"pe": {"hbm": {"capacity_bytes": 268435456}}})",
       config_scenario(source_path("traces/models/llama-3-8b.json")), "",
       {"model weights do not fit", "8030261248 parameters", "hw.json: pe.hbm.capacity_bytes = 268435456: short by",
        "raise pe.hbm.capacity_bytes to at least", "groups to about"}},
      // fp32 weights: storing them in 16 bits is one more way out (fp16 ones are told only the two above).
      {"fit.model_weights_fp32", R"({"pe": {"hbm": {"capacity_bytes": 268435456}}})",
       config_scenario(source_path("traces/models/llama-3-8b.json"), "fp32"), "",
       {"model weights do not fit", "32121044992 bytes", "or store a 16-bit model.dtype"}},
      // ---- ranges of time and integer widths (docs/reliability.md) ----
      {"hw.mesh_placement_beyond_int", R"({"noc": {"model": "mesh", "params": {"placement": {"host": [4294967296, 0]}}}})",
       "", "", {"hw.json", "placement.host", "[4294967296,0]", "expected [x, y] with 0 <= x < "}},
      {"hw.ring_placement_beyond_int", R"({"noc": {"model": "ring", "params": {"placement": {"host": 4294967297}}}})",
       "", "", {"hw.json", "placement.host", "4294967297", "expected a node index 0.."}},
      {"hw.too_slow_for_simulated_time",
       R"({"clock_ghz": 0.01, "group": {"cubes": 1}, "cube": {"pes": 4},
           "pe": {"gemm": {"issue_interval": 1048576, "tile_m": 1, "tile_n": 1, "tile_k": 1}}})",
       "", quote(source_path("traces/long_prefix_32k.json")) + " --no-values --hw {hw} --out {out}",
       {"hw.json: the run would last longer than simulated time can represent", "PE 0 of group 0 alone computes for at least",
        "clock_ghz = 0.01 (default 1.0)", "pe.gemm.issue_interval = 1048576 (default 16)", "pe.gemm.tile_k = 1 (default 16)"}},
      // ---- command line ----
      {"cli.seed_negative", "", "", "{sc} --out {out} --seed=-1", {"--seed", "\"-1\"", "[0, 9223372036854775807]"}},
      {"cli.seed_text", "", "", "{sc} --out {out} --seed abc", {"--seed", "\"abc\"", "not an integer"}},
      {"cli.seed_overflow", "", "", "{sc} --out {out} --seed 99999999999999999999999",
       {"--seed", "\"99999999999999999999999\"", "[0, 9223372036854775807]"}},
      {"cli.watchdog_negative", "", "", "{sc} --out {out} --watchdog-ns=-5", {"--watchdog-ns", "\"-5\"", "[1, 1e+15]"}},
      {"cli.watchdog_nan", "", "", "{sc} --out {out} --watchdog-ns nan", {"--watchdog-ns", "\"nan\"", "not a number"}},
      {"cli.watchdog_zero", "", "", "{sc} --out {out} --watchdog-ns 0", {"--watchdog-ns", "\"0\"", "[1, 1e+15]"}},
      {"cli.watchdog_beyond_range", "", "", "{sc} --out {out} --watchdog-ns 2e15",
       {"--watchdog-ns", "\"2e15\"", "[1, 1e+15]"}},
      {"cli.watchdog_unit", "", "", "{sc} --out {out} --watchdog-ns 1ms", {"--watchdog-ns", "\"1ms\"", "not a number"}},
      {"cli.out_is_file", "", "", "{sc} --out {dir}/existing_file", {"--out", "existing_file", "exists and is not a directory"}},
      {"cli.out_not_run_dir", "", "", "{sc} --out {dir}/foreign_dir",
       {"--out", "foreign_dir", "not an ahbm-sim run directory (it holds notes.txt but no .ahbm-run marker)"}},
      {"cli.out_parent_is_file", "", "", "{sc} --out {dir}/existing_file/sub", {"existing_file is not a directory"}},
      // The parents --out made are removed again (the lock file in the deepest one once kept them).
      {"cli.out_new_parents_removed", R"({"clock_gz": 2})", "", "{sc} --hw {hw} --out {dir}/a/p1/p2/p3",
       {"hw.json", "clock_gz: unknown key"}},
      {"serve.out_new_parents_removed", "", "", "{dir}/nope.json --out {dir}/a/p1/p2/p3", {"nope.json", "cannot open file"},
       "serve"},
      {"cli.unknown_option", "", "", "{sc} --out {out} --frobnicate", {"unrecognised option '--frobnicate'"}},
      {"cli.missing_out", "", "", "{sc}", {"missing --out DIR"}},
      {"cli.missing_scenario", "", "", "--out {out}", {"missing SCENARIO.json"}},
      {"cli.two_scenarios", "", "", "{sc} {sc} --out {out}", {"too many positional options"}},
      {"cli.tensors_without_values", "", "", "{sc} --out {out} --dump-tensors --no-values",
       {"--dump-tensors needs values"}},
      {"cli.unknown_noc", "", "", "{sc} --out {out} --noc mesh2", {"--noc", "\"mesh2\"", "allowed: ", "did you mean \"mesh\""}},
      {"cli.missing_option_value", "", "", "{sc} --out {out} --hw", {"the required argument for option '--hw' is missing"}},
      {"cli.objective_unknown", "", "", "{sc} --out {out} --objective power",
       {"--objective: value \"power\" is not an objective (allowed: time, energy, edp)"}},
      // ---- issue 42: serve's Azure CSV, the BookSim reader, the benches' options (docs/reliability.md) ----
      {"serve.csv_fifo", "", "", kServe, {"fifo.csv: is not a regular file"}, "serve",
       {{"w.json", csv_workload("fifo.csv")}, {"fifo.csv", "<fifo>"}}},
      {"serve.csv_dev_zero", "", "", kServe, {"/dev/zero: is not a regular file"}, "serve",
       {{"w.json", csv_workload("/dev/zero")}}},
      {"serve.csv_dev_null", "", "", kServe, {"/dev/null: is not a regular file"}, "serve",
       {{"w.json", csv_workload("/dev/null")}}},
      {"serve.csv_directory", "", "", kServe, {"foreign_dir: is a directory, not an Azure trace CSV"}, "serve",
       {{"w.json", csv_workload("foreign_dir")}}},
      {"serve.csv_empty", "", "", kServe, {"t.csv: file is empty (expected the header TIMESTAMP,"}, "serve",
       {{"w.json", csv_workload("t.csv")}, {"t.csv", ""}}},
      {"serve.csv_impossible_date", "", "", kServe,
       {"t.csv: line 3: TIMESTAMP \"2023-11-31 00:00:00\": day 31 is out of range (allowed: [1, 30] in 2023-11)"}, "serve",
       {{"w.json", csv_workload("t.csv")}, {"t.csv", std::string(kCsvHeader) + "2023-11-30 23:00:00,64,2\n2023-11-31 00:00:00,64,2\n"}}},
      {"serve.csv_february_29", "", "", kServe, {"TIMESTAMP \"2023-02-29 10:00:00\": day 29", "[1, 28] in 2023-02"}, "serve",
       {{"w.json", csv_workload("t.csv")}, {"t.csv", std::string(kCsvHeader) + "2023-02-29 10:00:00,64,2\n"}}},
      {"serve.csv_bom_bad_header", "", "", kServe,
       {"t.csv: line 1 must be the header", "got \"TIMESTAMP,Context,GeneratedTokens\" after a UTF-8 byte-order mark"}, "serve",
       {{"w.json", csv_workload("t.csv")}, {"t.csv", "\xEF\xBB\xBFTIMESTAMP,Context,GeneratedTokens\n0,64,2\n"}}},
      {"serve.csv_nul_byte", "", "", kServe, {"got \"TIMES\\x00TAMP,ContextTokens,GeneratedTokens\""}, "serve",
       {{"w.json", csv_workload("t.csv")}, {"t.csv", bytes("TIMES\0TAMP,ContextTokens,GeneratedTokens\n0,64,2\n")}}},
      {"serve.templates_with_azure_csv", "", "", kServe,
       {"w.json: templates: not allowed with arrival.process = \"azure_csv\""}, "serve",
       {{"w.json", csv_workload("t.csv", R"(, "templates": [{"name": "t", "prompt_tokens": 64, "answer_tokens": 2}])")},
        {"t.csv", std::string(kCsvHeader) + "0,64,2\n"}}},
      // Times are double ns, bounded to 2^50 ns (docs/reliability.md, "Ranges of time").
      {"serve.times_ns_beyond_exact_range", "", "", kServe,
       {"w.json: arrival.times_ns: element 1 = 1e+18 must be a number in [previous time, 1125899906842624]"}, "serve",
       {{"w.json", R"({"name": "w", "scenario": "{src}/traces/serve/small_attn.json",
           "arrival": {"process": "timestamps", "times_ns": [0, 1e18]},
           "templates": [{"name": "t", "prompt_tokens": 64, "answer_tokens": 2}]})"}}},
      {"serve.csv_seconds_beyond_exact_range", "", "", kServe,
       {"t.csv: line 3: TIMESTAMP \"1e10\" is 10000000000.0 s after the first row's", "2^50 ns"}, "serve",
       {{"w.json", csv_workload("t.csv")}, {"t.csv", std::string(kCsvHeader) + "0,64,2\n1e10,64,2\n"}}},
      {"serve.poisson_beyond_exact_range", "", "", kServe,
       {"w.json: arrival: workflow ",  " of count = 30 at rate_per_s = 1e-06 arrives at", "2^50 ns"}, "serve",
       {{"w.json", R"({"name": "w", "scenario": "{src}/traces/serve/small_attn.json",
           "arrival": {"process": "poisson", "rate_per_s": 1e-6, "count": 30},
           "templates": [{"name": "t", "prompt_tokens": 64, "answer_tokens": 2}]})"}}},
      // Branches planned apart each hold the prefix in the chip's HBM (B1 and B3: on every CUBE):
      // refused before the first step; it was admitted and failed mid-run (issue 42, item 11).
      {"serve.unbatched_branches_beyond_hbm", "", "", "{dir}/w.json --out {out} --set pe.hbm.capacity_bytes=1114112",
       {"w.json: workflow 0 (template t, prompt_tokens 1500) needs up to", "KV pages, more than the pool's"}, "serve",
       {{"w.json", unbatched_workload("B3")}}},
      {"serve.b1_copies_beyond_hbm", "", "", "{dir}/w.json --out {out} --set pe.hbm.capacity_bytes=1114112",
       {"w.json: workflow 0 (template t, prompt_tokens 1500) needs up to", "x 4 copies: scheduler.attention_policy = 'B1'"},
       "serve",
       {{"w.json", unbatched_workload("B1")}}},
      {"serve.rate_hex", "", "", "{src}/traces/serve/agentic_mix.json --out {out} --rate-per-s 0x10",
       {"--rate-per-s: value \"0x10\" is not a number in [1e-06, 1e+12]"}, "serve"},
      {"serve.stop_at_zero", "", "", "{src}/traces/serve/agentic_mix.json --out {out} --stop-at-s 0",
       {"--stop-at-s: value \"0\" is not a number in [1e-09, 1e+09]"}, "serve"},
      {"serve.stop_at_nan", "", "", "{src}/traces/serve/agentic_mix.json --out {out} --stop-at-s nan",
       {"--stop-at-s: value \"nan\" is not a number in [1e-09, 1e+09]"}, "serve"},
      {"serve.objective_unknown", "", "", kServe, {"w.json: scheduler.objective", "\"power\"", "time", "energy", "edp"},
       "serve",
       {{"w.json", R"({"name": "w", "scenario": "{src}/traces/serve/small_attn.json",
           "arrival": {"process": "timestamps", "times_ns": [0]},
           "templates": [{"name": "t", "prompt_tokens": 64, "answer_tokens": 2}],
           "scheduler": {"attention_policy": "auto", "objective": "power"}})"}}},
      {"noc.booksim_directory", "", "", "--booksim {dir}", {"is a directory, not a BookSim config"}, "noc-bench"},
      {"noc.booksim_fifo", "", "", "--booksim {dir}/fifo.cfg", {"fifo.cfg: is not a regular file"}, "noc-bench",
       {{"fifo.cfg", "<fifo>"}}},
      {"noc.booksim_dev_zero", "", "", "--booksim /dev/zero", {"/dev/zero: is not a regular file"}, "noc-bench"},
      {"noc.booksim_rate_range", "", "", "--booksim {dir}/b.cfg", {"b.cfg: injection_rate = 0: must be in [1e-09, 64]"},
       "noc-bench", {{"b.cfg", "injection_rate = 0;\n"}}},
      // A BookSim config's errors name its keys, not noc-bench options the user never gave.
      {"noc.booksim_window_names_keys", "", "", "--booksim {dir}/b.cfg",
       {"b.cfg: sample_period = 10000000, warmup_periods = 3, max_samples = 1000", "(cycles = 9970000000): must be in [1, 1e8]"},
       "noc-bench", {{"b.cfg", "sim_type = throughput; sample_period = 10000000; max_samples = 1000;\n"}}},
      {"noc.booksim_nodes_names_keys", "", "", "--booksim {dir}/b.cfg",
       {"b.cfg: topology = torus, k = 8, n = 1 (nodes = 8): transpose traffic needs a square node count"}, "noc-bench",
       {{"b.cfg", "topology = torus; k = 8; n = 1; traffic = transpose;\n"}}},
      {"noc.booksim_nul_byte", "", "", "--booksim {dir}/b.cfg", {"b.cfg: k\\x00ey = 3: not modelled"}, "noc-bench",
       {{"b.cfg", bytes("k\0ey = 3;\n")}}},
      {"noc.seed_negative", "", "", "--seed=-1", {"--seed: value \"-1\" is not an integer in [0, 18446744073709551615]"},
       "noc-bench"},
      {"noc.perm_seed_negative", "", "", "--traffic randperm --perm-seed=-1",
       {"--perm-seed: value \"-1\" is not an integer in [0, 18446744073709551615]"}, "noc-bench"},
      {"noc.drain_negative", "", "", "--drain -2", {"--drain -2: must be -1 (as long as --cycles) or in [0, 1e8]"},
       "noc-bench"},
      {"hbm.seed_negative", "", "", "--pattern random --seed=-1",
       {"--seed: value \"-1\" is not an integer in [0, 18446744073709551615]"}, "hbm-bench"},
      {"coll.chips_zero", "", "", "--chips 0", {"--chips: value \"0\" is not an integer in [1, 4096]"}, "coll-bench"},
      {"coll.unknown_network", "", "", "--network tours",
       {"coll-bench: --network: unknown system network model \"tours\"", "did you mean \"torus\""}, "coll-bench"},
      {"coll.radix_not_a_divisor", "", "", "--network fat_tree --param radix=3",
       {"coll-bench: --params.radix: 3 does not divide the chip count 8", "(allowed: 1, 2, 4, 8)"}, "coll-bench"},
      {"coll.algo_of_another_collective", "", "", "--collective all_gather --algo tree",
       {"--algo tree: all_gather has no such algorithm (allowed: ring)"}, "coll-bench"},
      {"coll.step_factor_one", "", "", "-f 1", {"--step-factor 1: must be in (1, 1024]"}, "coll-bench"},
      {"coll.max_below_min", "", "", "-b 1M -e 1K", {"--max-bytes 1024: must be in [--min-bytes = 1048576, 4294967296]"},
       "coll-bench"},
      {"coll.group_rank_out_of_range", "", "", "--chips 4 --groups 0,1,2,5",
       {"--groups: group 0 (chips 0 to 3): rank endpoint 5 out of range (allowed: 0 to 3)"}, "coll-bench"},
      {"coll.hw_torus_dims", R"({"system": {"chips": 8, "network": {"model": "torus", "params": {"dim_x": 3, "dim_y": 2}}}})", "",
       "--hw {hw}", {"hw.json: system.network.params.dim_x: dim_x x dim_y = 3 x 2 = 6 chips, not the chip count 8"},
       "coll-bench"},
      {"hwconfig.system_chips_zero", R"({"system": {"chips": 0}})", "", "{hw}",
       {"hw.json: system.chips: value 0 is out of range (allowed: [1, 4096])"}, "hw-config"},
      {"hwconfig.system_unknown_network", R"({"system": {"chips": 4, "network": {"model": "tours"}}})", "", "{hw}",
       {"hw.json: system.network.model: unknown system network model \"tours\"", "did you mean \"torus\""}, "hw-config"},
      {"hbm.chunk_bytes_negative", "", "", "--chunk-bytes=-1",
       {"--chunk-bytes: value \"-1\" is not an integer in [0, 18446744073709551615]"}, "hbm-bench"},
      {"hbm.bytes_negative", "", "", "--bytes=-1", {"--bytes: value \"-1\" is not an integer in [0, 18446744073709551615]"},
       "hbm-bench"},
      {"hbm.work_bound", "", "", "--pseudo-channels 64 --bytes 17179869184 --chunk-bytes 32",
       {"--bytes 17179869184 in chunks of --chunk-bytes 32", "5.37e+08 chunks", "exceed the bench's bound",
        "--allow-large"},
       "hbm-bench"},
      {"hwconfig.noc_param_of_another_model", "", "", "--set noc.params.vcs=4",
       {"(built-in defaults): noc.params.vcs: unknown key"}, "hw-config"},
      {"nocs.unknown_option", "", "", "--bogus", {"unrecognised option '--bogus'"}, "nocs"},
      {"nocs.extra_argument", "", "", "extra", {"too many positional options"}, "nocs"},
      {"version.extra_argument", "", "", "--version extra", {"--version: error: takes no arguments (got \"extra\")"}, ""},
      {"sc.model_config_directory", "", config_scenario("foreign_dir"), "",
       {"sc.json: model.config: \"foreign_dir\" is a directory"}},
      {"sc.model_params_beyond_int64", R"({"hidden_size": 1048576, "intermediate_size": 4194304, "num_attention_heads": 1024,
           "num_hidden_layers": 1024, "vocab_size": 16777216, "num_local_experts": 1024, "num_experts_per_tok": 1})",
       config_scenario("hw.json"), "{sc} --out {out}",
       {"hw.json: hidden_size: value 1048576", "gives about 1.38e+19 parameters (allowed: up to 2^61"}},
  };
  return list;
}

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, ExitsTwoNamingFieldAndValueWithoutOutput) {
  const BadInput& c = GetParam();
  ScratchDir dir;
  write_file(dir / "sc.json", c.scenario.empty() ? kScenario : c.scenario);
  write_file(dir / "hw.json", c.hw);
  write_file(dir / "empty.json", "  \n");
  write_file(dir / "existing_file", "not a run\n");
  fs::create_directories(dir / "foreign_dir");
  write_file(dir / "foreign_dir/notes.txt", "keep me\n");
  for (const auto& [name, text] : c.files) {
    if (text == "<fifo>") ASSERT_EQ(mkfifo((dir / name).c_str(), 0644), 0) << name;
    else write_file(dir / name, replace_all(text, "{src}", AHBM_SOURCE_DIR));
  }
  std::string args = c.args.empty() ? (c.hw.empty() ? "{sc} --out {out}" : "{sc} --hw {hw} --out {out}") : c.args;
  args = replace_all(args, "{sc}", quote(dir / "sc.json"));
  args = replace_all(args, "{hw}", quote(dir / "hw.json"));
  args = replace_all(args, "{out}", quote(dir / "out"));
  args = replace_all(args, "{dir}", dir.path().string());
  args = replace_all(args, "{src}", AHBM_SOURCE_DIR);
  const std::vector<std::string> before = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(dir.path())) names.push_back(e.path().string());
    std::sort(names.begin(), names.end());
    return names;
  }();

  // A reader that hangs (a FIFO) or reads without end (/dev/zero) fails the case, not the suite.
  // (The address-space limit only off `run`, whose preflight reads RLIMIT_AS, and not under
  // AddressSanitizer, which reserves terabytes of shadow address space at start and aborts under
  // any such limit; there the timeout alone bounds a case.)
  const bool limit_address_space = c.command != "run" && !kUnderAddressSanitizer;
  const CliResult r = run_cli(c.command + " " + args, dir.path(),
                              std::string(limit_address_space ? "ulimit -v 8000000; " : "") + "timeout -s KILL 120 env");

  EXPECT_EQ(r.exit_code, 2) << "stderr: " << r.err;
  for (const auto& e : c.expect) EXPECT_NE(r.err.find(e), std::string::npos) << "missing \"" << e << "\" in: " << r.err;
  EXPECT_FALSE(fs::exists(dir / "out")) << "--out was created";
  // Nothing else appeared (no temporary run directory left behind) and nothing was overwritten.
  std::vector<std::string> after;
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) after.push_back(e.path().string());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(before, after);
  EXPECT_EQ(read_file(dir / "existing_file"), "not a run\n");
  EXPECT_EQ(read_file(dir / "foreign_dir/notes.txt"), "keep me\n");
  // Regenerating docs/reliability.md: AHBM_BAD_INPUT_TABLE=file appends "id<TAB>message" lines.
  if (const char* table = std::getenv("AHBM_BAD_INPUT_TABLE")) {
    std::string msg = r.err.substr(0, r.err.find('\n'));
    msg = replace_all(msg, dir.path().string() + "/", "");
    std::ofstream(table, std::ios::app) << c.id << "\t" << r.exit_code << "\t" << msg << "\n";
  }
}

std::string case_name(const ::testing::TestParamInfo<BadInput>& info) {
  std::string n = info.param.id;
  std::replace(n.begin(), n.end(), '.', '_');
  return n;
}

INSTANTIATE_TEST_SUITE_P(Cli, BadInputTest, ::testing::ValuesIn(cases()), case_name);

TEST(BadInputDocs, EveryCaseIdIsUniqueAndTabulated) {
  const std::string doc = read_file(source_path("docs/reliability.md"));
  ASSERT_FALSE(doc.empty()) << "docs/reliability.md is missing";
  std::vector<std::string> ids;
  for (const auto& c : cases()) {
    ids.push_back(c.id);
    EXPECT_NE(doc.find("| `" + c.id + "` |"), std::string::npos) << c.id << " is not in the docs table";
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
  EXPECT_GE(ids.size(), 30u);
}

}  // namespace
