#pragma once
// Test support for the NoC tests: a probe that sends chosen packets into a model at chosen
// cycles and records every arrival (time, hops), and a run of the default scenario on a model.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/common/sim/sim_context.h"
#include "hw/common/observe/span_recorder.h"
#include "hw/common/observe/trace_sink.h"
#include "hw/noc/noc.h"
#include "runtime/run/driver.h"

namespace ahbm::test {

struct ProbeSend {
  int64_t cycle;
  int src;
  std::vector<int> dsts;
  uint64_t bytes;
};

struct ProbeArrival {
  int send;  // index into the sends
  int endpoint;
  int64_t cycle;  // arrival, in clock cycles (1 GHz: ns)
  int hops;
};

struct ProbeResult {
  std::vector<ProbeArrival> arrivals;
  StatsNode stats;  // the model's counters
  uint64_t flit_bytes = 0;
};

inline std::vector<std::string> node_names(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("n" + std::to_string(i));
  return v;
}

class ProbeHarness : public sc_core::sc_module, public NocClient {
 public:
  ProbeHarness(sc_core::sc_module_name name, Noc& noc, const std::vector<ProbeSend>& sends)
      : sc_core::sc_module(name), noc_(noc), sends_(sends) {
    for (int e = 0; e < noc.endpoint_count(); ++e) noc.attach(e, this);
    SC_HAS_PROCESS(ProbeHarness);
    SC_THREAD(run);
  }
  void noc_receive(int endpoint, const NocPacket& p) override {
    arrivals.push_back({p.tag, endpoint, int64_t(to_ns(sc_core::sc_time_stamp()) + 0.5), p.hops});
  }
  std::vector<ProbeArrival> arrivals;

 private:
  void run() {
    for (size_t i = 0; i < sends_.size(); ++i) {  // sends must be in cycle order
      const sc_core::sc_time at(double(sends_[i].cycle), sc_core::SC_NS);
      if (at > sc_core::sc_time_stamp()) sc_core::wait(at - sc_core::sc_time_stamp());
      NocPacket p;
      p.src = sends_[i].src;
      p.dsts = sends_[i].dsts;
      p.bytes = sends_[i].bytes;
      p.tag = int(i);
      noc_.send(std::move(p));
    }
  }
  Noc& noc_;
  std::vector<ProbeSend> sends_;
};

// The router timing a parameter set stands for, written out independently of the engine, and
// the zero-load closed form T0 = inject + H * head + (H - 1) * link + eject + (F - 1).
struct Pipeline {
  int head;    // cycles a head spends in a router at zero load
  int link;    // router-to-router channel
  int inject;  // source to first router
  int eject;   // last router to destination
};
constexpr Pipeline kClassicPipeline = {4, 1, 0, 1}, kBooksimPipeline = {4, 1, 2, 1};

inline int64_t closed_form(int hops, int64_t flits, const Pipeline& p) {
  return p.inject + int64_t(hops) * p.head + int64_t(hops - 1) * p.link + p.eject + (flits - 1);
}

// Routers a packet traverses from node s to node d: XY on a mesh with `cols` columns; shortest
// direction on an n-node ring.
inline std::function<int(int, int)> mesh_hops(int cols) {
  return [cols](int s, int d) { return std::abs(s % cols - d % cols) + std::abs(s / cols - d / cols) + 1; };
}
inline std::function<int(int, int)> ring_hops(int n) {
  return [n](int s, int d) {
    const int cw = (d - s + n) % n;
    return std::min(cw, n - cw) + 1;
  };
}
// A cols x rows torus: the shorter way round in each dimension.
inline std::function<int(int, int)> torus_hops(int cols, int rows) {
  return [cols, rows](int s, int d) {
    const int dx = std::abs(s % cols - d % cols), dy = std::abs(s / cols - d / cols);
    return std::min(dx, cols - dx) + std::min(dy, rows - dy) + 1;
  };
}

// Runs until the network is quiet (no time limit: a deadlock shows up as missing arrivals).
inline ProbeResult run_probe(const std::string& model, const Json& params, const std::vector<std::string>& endpoints,
                             const std::vector<ProbeSend>& sends, const NocRegistry* registry = nullptr) {
  const NocRegistry builtin = NocRegistry::with_builtin_models();
  const NocRegistry& reg = registry ? *registry : builtin;
  ProbeResult r;
  SimContext context;
  SimContext::Scope use_context(context);
  TraceSink trace(false);
  SpanRecorder spans;
  NocContext ctx;
  ctx.params = params;
  ctx.endpoints = endpoints;
  ctx.trace = &trace;
  ctx.spans = &spans;
  {
    std::unique_ptr<Noc> noc = reg.get(model).make("noc", ctx);
    ProbeHarness h("probe", *noc, sends);
    sc_core::sc_start();
    r.arrivals = h.arrivals;
    noc->report_stats(r.stats);
    r.flit_bytes = noc->flit_bytes();
    unwind_threads();  // free what suspended threads hold before their modules go
  }
  return r;
}

// run_probe's number of arrivals; a deadlock (or any error) fails the test naming the model and
// parameters, and counts as no arrival.
inline size_t arrivals_or_error(const std::string& model, const Json& params, const std::vector<std::string>& endpoints,
                                const std::vector<ProbeSend>& sends) {
  try {
    return run_probe(model, params, endpoints, sends).arrivals.size();
  } catch (const std::exception& e) {
    ADD_FAILURE() << model << " " << params.dump() << ": " << e.what();
    return 0;
  }
}

// The default scenario (traces/fanout_8x20.json) at its largest Q tile on NoC `noc` with `params`;
// `registry` null = the built-in models.
inline RunOutput run_default_scenario(const std::string& noc, const Json& params = Json::object(),
                                      bool values = true, const NocRegistry* registry = nullptr) {
  const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json");
  HwConfig hw;
  // One 160-row Q tile, the shape these NoC tests' closed forms count (1280 flits per tile): the
  // tile search would pick a tile per NoC estimate, and these tests compare NoCs, not tiles.
  hw.q_tile_search = QTileSearch::largest;
  hw.noc.model = noc;
  hw.noc.params = params;
  RunOptions opt;
  opt.vcd = false;
  opt.values = values;
  opt.nocs = registry;
  return execute(sc, hw, opt);
}

}  // namespace ahbm::test
