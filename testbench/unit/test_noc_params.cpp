// Bad NoC parameters and options are InputErrors naming the field, the value and what is
// allowed. (On the command line they exit with status 2: e2e/test_noc_params_cli.cpp.)
#include <gtest/gtest.h>

#include "hw/common/sim/sim_context.h"
#include "hw/noc/noc.h"
#include "hw/bench/noc_bench.h"

using namespace ahbm;

namespace {

// Builds the model and returns the InputError text ("" if it was accepted).
std::string build_error(const std::string& model, const Json& params) {
  SimContext context;
  SimContext::Scope use_context(context);
  NocContext ctx;
  ctx.params = params;
  ctx.config_file = "hw.json";
  ctx.endpoints = {"host", "qsrc", "g0.cube0", "g0.cube1", "g0.cube2", "g0.cube3"};
  try {
    NocRegistry::with_builtin_models().get(model).make("noc", ctx);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(NocParams, ErrorsNameFieldValueAndRange) {
  EXPECT_EQ(build_error("mesh", {{"cols", 3}, {"rows", 2}, {"placement", {{"qsrc", {2, 1}}}}}), "");
  std::string e = build_error("mesh", {{"router_cycle", 3}});
  EXPECT_NE(e.find("hw.json"), std::string::npos) << e;
  EXPECT_NE(e.find("noc.params.router_cycle"), std::string::npos) << e;
  EXPECT_NE(e.find("router_cycles"), std::string::npos) << e;  // did you mean
  e = build_error("ring", {{"link_cycles", 0}});
  EXPECT_NE(e.find("noc.params.link_cycles"), std::string::npos) << e;
  EXPECT_NE(e.find("64"), std::string::npos) << e;  // the allowed range
  e = build_error("crossbar", {{"multicast", "broadcast"}});
  EXPECT_NE(e.find("tree"), std::string::npos) << e;
  EXPECT_NE(e.find("source"), std::string::npos) << e;
  e = build_error("mesh", {{"placement", {{"g0.cube9", {0, 0}}}}});
  EXPECT_NE(e.find("noc.params.placement.g0.cube9"), std::string::npos) << e;
  EXPECT_NE(e.find("g0.cube3"), std::string::npos) << e;  // lists the endpoints
  e = build_error("mesh", {{"cols", 3}, {"rows", 2}, {"placement", {{"qsrc", {3, 0}}}}});
  EXPECT_NE(e.find("placement.qsrc"), std::string::npos) << e;
  EXPECT_NE(e.find("0 <= x < 3"), std::string::npos) << e;
  e = build_error("ring", {{"vcs", 3}});
  EXPECT_NE(e.find("noc.params.vcs"), std::string::npos) << e;
  EXPECT_NE(e.find("even"), std::string::npos) << e;
  e = build_error("ring", {{"placement", {{"host", 6}}}});
  EXPECT_NE(e.find("0..5"), std::string::npos) << e;
}

TEST(NocParams, BenchOptionsAreChecked) {
  const NocRegistry reg = NocRegistry::with_builtin_models();
  NocBenchOptions o;
  o.traffic = "zigzag";  // not a pattern
  EXPECT_THROW(run_noc_bench(reg, o), InputError);
  o = NocBenchOptions();
  o.rate = 1.5;
  EXPECT_THROW(run_noc_bench(reg, o), InputError);
  o = NocBenchOptions();
  o.traffic = "transpose";
  o.nodes = 12;  // not a square
  EXPECT_THROW(run_noc_bench(reg, o), InputError);
  o = NocBenchOptions();
  o.noc = "hypercube";  // not a registered model
  EXPECT_THROW(run_noc_bench(reg, o), InputError);
}
