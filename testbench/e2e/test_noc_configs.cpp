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
         "sample_period = 1000; max_samples = 3;\n";
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
