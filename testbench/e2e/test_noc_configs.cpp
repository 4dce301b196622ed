// Configs for the testbench (docs/noc.md, "Configs"): BookSim2 config files mapped onto our
// options (comments, the common keys, an unknown key named with exit code 2), --hw with --set,
// and a BookSim config run end to end through the command line.
#include <gtest/gtest.h>

#include <fstream>

#include "hw/bench/booksim_config.h"
#include "test_support.h"

using namespace ahbm;

TEST(NocConfigs, BooksimKeysMapOntoTheTestbench) {
  const std::string text = R"(
// A BookSim2 config (examples/mesh88_lat style)
topology = mesh;
k = 4;   n = 2;
routing_function = dim_order;
/* flow control */
num_vcs = 4;
vc_buf_size = 4;
credit_delay = 0;
routing_delay = 1; vc_alloc_delay = 1; sw_alloc_delay = 1;
st_prepare_delay = 0; st_final_delay = 1;
vc_allocator = islip; sw_allocator = islip; alloc_iters = 1;
traffic = transpose;
injection_rate = 0.05;
injection_rate_uses_flits = 0;
packet_size = 4;
sim_type = latency;
warmup_periods = 2; sample_period = 500; max_samples = 8;
seed = 7;
print_csv_results = 1;
)";
  const NocBenchOptions o = parse_booksim_config(text, "mesh44.cfg");
  EXPECT_EQ(o.noc, "mesh");
  EXPECT_EQ(o.nodes, 16);
  EXPECT_EQ(o.params["cols"], 4);
  EXPECT_EQ(o.params["rows"], 4);
  EXPECT_EQ(o.params["router"], "booksim-iq");
  EXPECT_EQ(o.params["vcs"], 4);
  EXPECT_EQ(o.params["buffer_flits"], 4);
  EXPECT_EQ(o.params["st_delay"], 1);
  EXPECT_EQ(o.params["credit_delay"], 1);  // BookSim's 0 + the cycle its router takes to read a credit
  EXPECT_EQ(o.params["sw_allocator"], "islip");
  EXPECT_EQ(o.params["alloc_iters"], 1);
  EXPECT_EQ(o.params["input_speedup"], 1);
  // Allocators by BookSim's names; sw_alloc_iters overrides alloc_iters.
  const NocBenchOptions of = parse_booksim_config(text, "mesh44.cfg",
                                                  {"sw_allocator=separable_output_first", "alloc_iters=2",
                                                   "input_speedup=2"});
  EXPECT_EQ(of.params["sw_allocator"], "output-first");
  EXPECT_EQ(of.params["alloc_iters"], 2);
  EXPECT_EQ(of.params["input_speedup"], 2);
  EXPECT_EQ(parse_booksim_config(text, "m.cfg", {"sw_alloc_iters=3"}).params["alloc_iters"], 3);
  EXPECT_EQ(parse_booksim_config(text, "m.cfg", {"sw_allocator=separable_input_first"}).params["sw_allocator"],
            "input-first");
  EXPECT_EQ(parse_booksim_config(text, "m.cfg", {"sw_allocator=wavefront"}).params["sw_allocator"], "wavefront");
  EXPECT_EQ(o.traffic, "transpose");
  EXPECT_TRUE(o.rate_in_packets);
  EXPECT_DOUBLE_EQ(o.rate, 0.05);
  EXPECT_EQ(o.packet_flits, 4);
  EXPECT_EQ(o.warmup, 1000);
  EXPECT_EQ(o.cycles, 3000);
  EXPECT_EQ(o.seed, 7u);
  // BookSim's uniform includes the source; a torus with n = 1 is our ring; --set overrides.
  const NocBenchOptions ring = parse_booksim_config("topology = torus; k = 8; n = 1; traffic = uniform;", "t.cfg",
                                                    {"injection_rate=0.2", "num_vcs = 2"});
  EXPECT_EQ(ring.noc, "ring");
  EXPECT_EQ(ring.params["nodes"], 8);
  EXPECT_TRUE(ring.include_self);
  EXPECT_DOUBLE_EQ(ring.rate, 0.2);
  EXPECT_EQ(ring.params["vcs"], 2);
  // BookSim's default topology, the 8-ary 2-cube, is our 8 x 8 torus.
  const NocBenchOptions torus = parse_booksim_config("traffic = uniform;", "d.cfg");
  EXPECT_EQ(torus.noc, "torus");
  EXPECT_EQ(torus.nodes, 64);
  EXPECT_EQ(torus.params["cols"], 8);
}

TEST(NocConfigs, KeysWeDoNotModelAreNamed) {
  auto error_of = [](const std::string& text) {
    try {
      parse_booksim_config(text, "x.cfg");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("topology = mesh; k = 4; n = 2; vc_priority_donation = 1;").find("vc_priority_donation"),
            std::string::npos);
  EXPECT_NE(error_of("topology = mesh; k = 4; n = 2; alloc_iters = 0;").find("alloc_iters"), std::string::npos);
  EXPECT_NE(error_of("topology = mesh; k = 4; n = 2; sw_allocator = pim;").find("sw_allocator"), std::string::npos);
  EXPECT_NE(error_of("topology = mesh; k = 4; n = 2; num_vcs = 2; input_speedup = 4;").find("input_speedup"),
            std::string::npos);
  EXPECT_NE(error_of("topology = fly; k = 4; n = 2;").find("topology"), std::string::npos);
  EXPECT_NE(error_of("topology = torus; k = 4; n = 2; num_vcs = 3;").find("num_vcs"), std::string::npos);
  EXPECT_NE(error_of("topology = mesh; k = 4; n = 2; routing_function = planar_adapt;").find("routing_function"),
            std::string::npos);
  EXPECT_NE(error_of("topology = mesh; k = 4; n = 2; num_vcs = many;").find("num_vcs"), std::string::npos);
  EXPECT_NE(error_of("topology = mesh k = 4;").find("x.cfg"), std::string::npos);
}

TEST(NocConfigs, CommandLineRunsBooksimAndHwConfigs) {
  const std::string dir = test::temp_dir("noc-configs");
  {
    std::ofstream f(dir + "/mesh.cfg");
    f << "topology = mesh; k = 4; n = 2; routing_function = dim_order;\n"
         "num_vcs = 4; vc_buf_size = 4; traffic = uniform; injection_rate = 0.02; packet_size = 2;\n"
         "sample_period = 1000; warmup_periods = 1; max_samples = 3;\n";
  }
  const auto ok = test::run_cli("noc-bench --booksim '" + dir + "/mesh.cfg' --set seed=3 --out '" + dir + "/r.json'");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  const Json r = load_json_file(dir + "/r.json");
  EXPECT_EQ(r["noc_stats"]["router"]["preset"], "booksim-iq");
  EXPECT_EQ(r["rate_unit"], "packets");
  EXPECT_NEAR(r["offered_flits_per_node_cycle"].get<double>(), 0.04, 0.006);
  {
    std::ofstream f(dir + "/bad.cfg");
    f << "topology = mesh; k = 4; n = 2; channel_width = 128;\n";
  }
  const auto bad = test::run_cli("noc-bench --booksim '" + dir + "/bad.cfg'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("channel_width"), std::string::npos) << bad.output;
  const auto mixed = test::run_cli("noc-bench --booksim '" + dir + "/mesh.cfg' --rate 0.3");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.output.find("--rate"), std::string::npos) << mixed.output;

  // --hw: the hardware config's NoC; --set changes a field of it.
  {
    std::ofstream f(dir + "/hw.json");
    f << R"({"noc": {"model": "ring", "params": {"vcs": 2}}})";
  }
  const auto hw = test::run_cli("noc-bench --hw '" + dir + "/hw.json' --set noc.params.vcs=4 --nodes 8 --rate 0.05 "
                                "--cycles 2000 --out '" + dir + "/h.json'");
  EXPECT_EQ(hw.exit_code, 0) << hw.output;
  const Json h = load_json_file(dir + "/h.json");
  EXPECT_EQ(h["noc"], "ring");
  EXPECT_EQ(h["noc_stats"]["vcs"], 4);
  const auto badhw = test::run_cli("noc-bench --hw '" + dir + "/hw.json' --set noc.params.vcs=3 --nodes 8");
  EXPECT_EQ(badhw.exit_code, 2);
  EXPECT_NE(badhw.output.find("vcs"), std::string::npos) << badhw.output;
}

// Issue 42 item 9: a run that delivers nothing has no latency. It printed "latency avg 0.0" and
// wrote avg_latency_cycles 0.0, a plausible number; now the line says so and the report has null.
TEST(NocConfigs, NoDeliveriesReportNoLatency) {
  const std::string dir = test::temp_dir("noc-no-deliveries");
  const auto r = test::run_cli("noc-bench --rate 1e-300 --cycles 2000 --out '" + dir + "/r.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.out.find("no packets delivered in the window, no latency"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("latency avg"), std::string::npos) << r.out;
  const Json j = load_json_file(dir + "/r.json");
  EXPECT_EQ(j["deliveries_measured"], 0);
  EXPECT_TRUE(j["avg_latency_cycles"].is_null()) << j["avg_latency_cycles"];
  EXPECT_TRUE(j["p99_latency_cycles"].is_null());
  EXPECT_TRUE(j["latency_percentiles_cycles"]["max"].is_null());
  EXPECT_TRUE(j["network_latency_cycles"]["avg"].is_null());
  const auto sweep = test::run_cli("noc-bench --sweep 1e-300,0.05 --cycles 2000 --out '" + dir + "/s.json'");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.output;
  EXPECT_NE(sweep.out.find("n/a      n/a"), std::string::npos) << sweep.out;
  const Json s = load_json_file(dir + "/s.json");
  EXPECT_TRUE(s["sweep"][0]["avg_latency_cycles"].is_null());
  EXPECT_GT(s["sweep"][1]["avg_latency_cycles"].get<double>(), 0.0);  // a run with deliveries is unchanged
}

// Every key of BookSim2's own example configs (src/examples/: the key sets and values, written
// out here) and its fate in the reader: read (A), read without effect and said in a note (I),
// mapped onto a different but equivalent value with a note (M), or refused with a message naming
// the key and why (R, with a word of the reason). Each key is read on its own on top of the
// file's topology where we model it (BookSim's default 8 x 8 torus otherwise), so a later key's
// fate does not hide behind an earlier refusal. Then each whole file: read, or refused naming one
// of its refused keys.
namespace {
struct KeyFate {
  const char* key;
  const char* value;
  char fate;            // A, I, M or R
  const char* check;    // A, M: "param=json" expected in the mapped parameters (or ""); R: a word of the reason
};
struct ExampleFile {
  const char* name;
  const char* context;  // the file's topology keys, when we model its topology
  std::vector<KeyFate> keys;
};

std::vector<KeyFate> plus(std::vector<KeyFate> a, const std::vector<KeyFate>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<ExampleFile> booksim_examples() {
  // The keys dragonflyconfig and fattree_config share (with the same values).
  const std::vector<KeyFate> separable = {
      {"hold_switch_for_packet", "1", 'R', "flit by flit"},
      {"wait_for_tail_credit", "0", 'A', ""},
      {"vc_allocator", "separable_input_first", 'A', ""},
      {"sw_allocator", "separable_input_first", 'A', ""},
      {"alloc_iters", "1", 'A', ""},
      {"credit_delay", "2", 'A', ""},
      {"routing_delay", "0", 'A', ""},
      {"vc_alloc_delay", "1", 'A', ""},
      {"sw_alloc_delay", "1", 'A', ""},
      {"st_final_delay", "1", 'A', ""},
      {"input_speedup", "1", 'A', ""},
      {"output_speedup", "1", 'A', ""},
      {"warmup_periods", "3", 'A', ""},
      {"sim_count", "1", 'A', ""},
      {"sample_period", "10000", 'A', ""},
      {"priority", "none", 'A', ""},
      {"traffic", "uniform", 'A', ""},
      {"injection_rate_uses_flits", "1", 'A', ""},
      {"k", "4", 'A', ""},
      {"watch_out", "-", 'A', ""},
  };
  const char* cmesh = "topology = cmesh; k = 4; n = 2; c = 4; xr = 2; yr = 2; x = 4; y = 4;";
  const char* flatfly = "topology = flatfly; k = 4; n = 2; c = 4; xr = 2; yr = 2; x = 4; y = 4;";
  return {
      {"torus88", "",
       {{"topology", "torus", 'A', "link_cycles=2"}, {"k", "8", 'A', "cols=8"}, {"n", "2", 'A', "rows=8"},
        {"routing_function", "dim_order", 'A', ""}, {"num_vcs", "2", 'A', "vcs=2"}, {"traffic", "uniform", 'A', ""},
        {"injection_rate", "0.15", 'A', ""}}},
      {"mesh88_lat", "topology = mesh; k = 8; n = 2;",
       {{"topology", "mesh", 'A', ""}, {"k", "8", 'A', "cols=8"}, {"n", "2", 'A', ""}, {"routing_function", "dor", 'A', ""},
        {"num_vcs", "2", 'A', "vcs=2"}, {"vc_buf_size", "16", 'A', "buffer_flits=16"},
        {"wait_for_tail_credit", "1", 'R', "tail"}, {"vc_allocator", "islip", 'A', "vc_allocator=\"islip\""},
        {"sw_allocator", "islip", 'A', "sw_allocator=\"islip\""}, {"alloc_iters", "1", 'A', "alloc_iters=1"},
        {"credit_delay", "2", 'A', "credit_delay=3"}, {"routing_delay", "1", 'A', "routing_delay=1"},
        {"vc_alloc_delay", "1", 'A', "vc_alloc_delay=1"}, {"input_speedup", "2", 'A', "input_speedup=2"},
        {"output_speedup", "1", 'A', ""}, {"internal_speedup", "1.0", 'A', ""}, {"traffic", "uniform", 'A', ""},
        {"const_flits_per_packet", "20", 'A', ""}, {"sim_type", "latency", 'A', ""}, {"injection_rate", "0.01", 'A', ""}}},
      {"cmeshconfig", cmesh,
       {{"topology", "cmesh", 'A', "link_cycles=2"}, {"k", "4", 'A', "cols=4"}, {"n", "2", 'A', ""},
        {"c", "4", 'A', "concentration=4"}, {"xr", "2", 'A', ""}, {"yr", "2", 'A', ""}, {"x", "4", 'A', ""},
        {"y", "4", 'A', ""}, {"routing_function", "dor_no_express", 'A', ""}, {"traffic", "bitcomp", 'A', ""},
        {"use_read_write", "1", 'R', "request-reply"}, {"batch_size", "2000", 'I', "batch"}}},
      {"flatflyconfig", flatfly,
       {{"num_vcs", "8", 'A', "vcs=8"}, {"vc_buf_size", "4", 'A', "buffer_flits=4"}, {"wait_for_tail_credit", "0", 'A', ""},
        {"vc_allocator", "islip", 'A', ""}, {"sw_allocator", "islip", 'A', ""}, {"alloc_iters", "1", 'A', ""},
        {"credit_delay", "2", 'A', "credit_delay=3"}, {"routing_delay", "0", 'A', "routing_delay=0"},
        {"vc_alloc_delay", "0", 'A', "vc_alloc_delay=0"}, {"sw_alloc_delay", "1", 'A', ""},
        {"st_final_delay", "1", 'A', "st_delay=1"}, {"input_speedup", "1", 'A', ""}, {"output_speedup", "1", 'A', ""},
        {"internal_speedup", "1.0", 'A', ""}, {"warmup_periods", "3", 'A', ""}, {"sample_period", "1000", 'A', ""},
        {"sim_count", "1", 'A', ""}, {"traffic", "uniform", 'A', ""}, {"topology", "flatfly", 'A', "pitch_cycles=2"},
        {"physical_subnetworks", "1", 'A', ""}, {"c", "4", 'A', "concentration=4"}, {"k", "4", 'A', ""},
        {"n", "2", 'A', ""}, {"x", "4", 'A', ""}, {"y", "4", 'A', ""}, {"xr", "2", 'A', "pitch_cycles=2"},
        {"yr", "2", 'A', ""}, {"limit", "0", 'A', ""}, {"routing_function", "ran_min", 'A', ""},
        {"use_read_write", "0", 'A', ""}, {"const_flits_per_packet", "1", 'A', ""}, {"injection_rate", "1.4", 'M', ""},
        {"read_request_size", "1", 'I', "request-reply"}, {"write_request_size", "1", 'I', "request-reply"},
        {"read_reply_size", "1", 'I', "request-reply"}, {"write_reply_size", "1", 'I', "request-reply"},
        {"read_request_begin_vc", "0", 'I', "request-reply"}, {"read_request_end_vc", "5", 'I', "request-reply"},
        {"write_reply_begin_vc", "2", 'I', "request-reply"}, {"write_reply_end_vc", "7", 'I', "request-reply"},
        {"read_reply_begin_vc", "8", 'I', "request-reply"}, {"read_reply_end_vc", "12", 'I', "request-reply"},
        {"write_request_begin_vc", "10", 'I', "request-reply"}, {"write_request_end_vc", "15", 'I', "request-reply"},
        {"sim_type", "latency", 'A', ""}}},
      {"singleconfig", "",
       {{"topology", "single", 'R', "modelled"}, {"in_ports", "10", 'R', "not modelled"}, {"out_ports", "10", 'R', "not modelled"},
        {"num_vcs", "", 'R', "integer"}, {"vc_buf_size", "8", 'A', ""}, {"vc_allocator", "separable_input_first", 'A', ""},
        {"sw_allocator", "separable_input_first", 'A', ""}, {"routing_function", "single", 'R', "modelled"},
        {"traffic", "uniform", 'A', ""}, {"use_read_write", "0", 'A', ""}, {"injection_rate", "1.6", 'M', ""},
        {"sample_period", "100000", 'A', ""}, {"routing_delay", "0", 'A', ""}, {"vc_alloc_delay", "1", 'A', ""},
        {"sw_alloc_delay", "1", 'A', ""}, {"st_final_delay", "1", 'A', ""}}},
      {"anynet_config", "",
       {{"topology", "anynet", 'R', "modelled"}, {"routing_function", "min", 'R', "modelled"},
        {"network_file", "anynet_file", 'R', "not modelled"}, {"traffic", "uniform", 'A', ""},
        {"use_read_write", "0", 'A', ""}, {"sample_period", "10000", 'A', ""}, {"injection_rate", "0.01", 'A', ""},
        {"vc_allocator", "separable_input_first", 'A', ""}, {"sw_allocator", "separable_input_first", 'A', ""},
        {"alloc_iters", "1", 'A', ""}, {"num_vcs", "1", 'R', "even"}, {"vc_buf_size", "3", 'A', ""}}},
      {"dragonflyconfig", "",
       plus(separable,
            {{"vc_buf_size", "256", 'A', ""}, {"internal_speedup", "2.0", 'R', "1.0"},
             {"routing_function", "min", 'R', "modelled"}, {"num_vcs", "2", 'A', ""}, {"injection_rate", "1.0", 'A', ""},
             {"const_flits_per_packet", "10", 'A', ""}, {"topology", "dragonflynew", 'R', "modelled"},
             {"n", "1", 'A', ""}})},
      {"fattree_config", "",
       plus(separable,
            {{"vc_buf_size", "16", 'A', ""}, {"internal_speedup", "1.0", 'A', ""},
             {"routing_function", "nca", 'R', "modelled"}, {"num_vcs", "4", 'A', ""}, {"injection_rate", "0.6", 'A', ""},
             {"packet_size", "1", 'A', ""}, {"topology", "fattree", 'R', "modelled"}, {"n", "3", 'R', "[1, 2]"}})},
      // Examples some BookSim trees carry besides: oblivious torus routings and the bufferless mesh.
      {"minimal_oblivious_torus", "",
       {{"topology", "torus", 'A', ""}, {"k", "8", 'A', ""}, {"n", "2", 'A', ""},
        {"routing_function", "minimal_oblivious", 'R', "modelled"}, {"num_vcs", "2", 'A', ""},
        {"traffic", "uniform", 'A', ""}, {"injection_rate", "0.15", 'A', ""}}},
      {"meshbless", "topology = mesh; k = 8; n = 2;",
       {{"num_vcs", "1", 'A', "vcs=1"}, {"vc_buf_size", "1", 'A', ""}, {"input_speedup", "2", 'A', "input_speedup=2"},
        {"traffic", "transpose", 'A', ""}, {"bufferless", "1", 'R', "not modelled"}, {"router", "chipper", 'R', "input-queued"},
        {"watch_file", "tempwatch", 'A', ""}}},
  };
}

std::string fate_error(const std::string& text, const std::string& file, NocBenchOptions* out = nullptr) {
  try {
    NocBenchOptions o = parse_booksim_config(text, file);
    if (out) *out = std::move(o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(NocConfigs, EveryBooksimExampleKeyHasAFate) {
  for (const ExampleFile& f : booksim_examples()) {
    std::vector<std::string> refused;
    std::string whole;
    for (const KeyFate& k : f.keys) {
      const std::string stmt = std::string(k.key) + " = " + k.value + ";";
      whole += stmt + "\n";
      if (k.fate == 'R') refused.push_back(k.key);
      NocBenchOptions o;
      const std::string err = fate_error(std::string(f.context) + "\n" + stmt, f.name, &o);
      const std::string where = std::string(f.name) + ": " + stmt;
      if (k.fate == 'R') {
        EXPECT_NE(err.find(std::string(k.key) + " = "), std::string::npos) << where << " -> " << err;
        EXPECT_NE(err.find(k.check), std::string::npos) << where << " -> " << err;
        continue;
      }
      ASSERT_EQ(err, "") << where;
      bool noted = false;
      for (const std::string& n : o.notes) noted = noted || n.find(std::string(k.key) + " = ") != std::string::npos;
      EXPECT_EQ(noted, k.fate == 'I' || k.fate == 'M') << where;
      const std::string check = k.check;
      if (k.fate == 'I') {
        for (const std::string& n : o.notes) {
          if (n.find(k.key) != std::string::npos) {
            EXPECT_NE(n.find(check), std::string::npos) << n;
          }
        }
      } else if (!check.empty()) {
        const size_t eq = check.find('=');
        EXPECT_EQ(o.params.value(check.substr(0, eq), Json()), Json::parse(check.substr(eq + 1))) << where;
      }
    }
    // The whole file: read when no key is refused, else refused naming one of them.
    const std::string err = fate_error(std::string(f.context) + "\n" + whole, f.name);
    if (refused.empty()) {
      EXPECT_EQ(err, "") << f.name;
    } else {
      bool named = false;
      for (const std::string& k : refused) named = named || err.find(k + " = ") != std::string::npos;
      EXPECT_TRUE(named) << f.name << " -> " << err;
    }
  }
}

// use_noc_latency (BookSim's default 1): the channel latencies BookSim gives each topology.
TEST(NocConfigs, BooksimChannelLatencies) {
  auto params = [](const std::string& text) { return parse_booksim_config(text, "l.cfg").params; };
  const Json torus = params("topology = torus; k = 4; n = 2;");
  EXPECT_EQ(torus["link_cycles"], 2);  // kncube.cpp: a torus's channels span two tiles
  EXPECT_EQ(torus["eject_cycles"], 1);
  EXPECT_EQ(params("topology = torus; k = 8; n = 1; num_vcs = 2;")["link_cycles"], 2);  // the ring
  EXPECT_FALSE(params("topology = torus; k = 4; n = 2; use_noc_latency = 0;").contains("link_cycles"));
  EXPECT_FALSE(params("topology = mesh; k = 4; n = 2;").contains("link_cycles"));  // 1 either way
  EXPECT_EQ(params("topology = cmesh; k = 4; n = 2; c = 4; xr = 2; yr = 2;")["link_cycles"], 2);
  EXPECT_EQ(params("topology = flatfly; k = 4; n = 2; c = 4; xr = 2; yr = 2; x = 4; y = 4;")["pitch_cycles"], 2);
  EXPECT_EQ(params("topology = flatfly; k = 8; n = 2;")["pitch_cycles"], 1);
  EXPECT_FALSE(params("topology = flatfly; k = 4; n = 2; use_noc_latency = 0;").contains("pitch_cycles"));
  // What BookSim would run differently is refused, naming the key, the value and why.
  const std::string cm = fate_error("topology = cmesh; k = 4; n = 2; use_noc_latency = 0;", "l.cfg");
  EXPECT_NE(cm.find("use_noc_latency = 0"), std::string::npos) << cm;
  EXPECT_NE(cm.find("latency of 0"), std::string::npos) << cm;
  const std::string c4 = fate_error("topology = cmesh; k = 4; n = 2; c = 4;", "l.cfg");  // xr, yr default 1
  EXPECT_NE(c4.find("c = 4"), std::string::npos) << c4;
  EXPECT_NE(c4.find("xr x yr"), std::string::npos) << c4;
  const std::string fx = fate_error("topology = flatfly; k = 4; n = 2;", "l.cfg");  // x defaults to 8
  EXPECT_NE(fx.find("x = (default)"), std::string::npos) << fx;
  EXPECT_NE(fate_error("topology = torus; k = 4; n = 2; routing_function = xy_yx; num_vcs = 4;", "l.cfg")
                .find("routing_function = xy_yx"),
            std::string::npos);
  // BookSim's warm-up of 3 sample periods; the rest of max_samples measured.
  const NocBenchOptions o = parse_booksim_config("sample_period = 500;", "w.cfg");
  EXPECT_EQ(o.warmup, 1500);
  EXPECT_EQ(o.cycles, 3500);
  // More than a packet per cycle offered: every cycle, as BookSim's Bernoulli source.
  const NocBenchOptions over = parse_booksim_config("injection_rate = 1.4;", "r.cfg");
  EXPECT_DOUBLE_EQ(over.rate, 1.0);
  ASSERT_EQ(over.notes.size(), 1u);
  EXPECT_NE(over.notes[0].find("injection_rate = 1.4"), std::string::npos);
}
