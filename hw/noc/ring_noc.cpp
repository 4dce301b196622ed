#include "hw/noc/ring_noc.h"

#include "hw/noc/mesh_noc.h"

namespace ahbm {

namespace {
const ParamTable<RingParams>& ring_param_table() {
  static const ParamTable<RingParams> table(AHBM_PARAM_FIELDS(RingParams, AHBM_PARAMS_NOC_RING));
  return table;
}
}  // namespace

std::vector<HwParam> RingNoc::params() {
  std::vector<HwParam> rows = ring_param_table().rows();
  for (HwParam& p : torus_param_table().rows()) rows.push_back(std::move(p));
  for (HwParam& p : flit_param_table().rows()) rows.push_back(std::move(p));
  return rows;
}

NocEstimate RingNoc::estimate(const NocEstimateInput& in) { return flit_estimate(in, FlitParams{}, 2); }

RingNoc::RingNoc(sc_core::sc_module_name name, const NocContext& ctx) : FlitNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  RingParams rp;
  ring_param_table().read(rp, r);
  TorusParams tp;
  torus_param_table().read(tp, r);
  if (rp.nodes == 1) r.fail("nodes", "1: a ring needs at least 2 nodes (0 = one per endpoint)");
  const int N = rp.nodes > 0 ? rp.nodes : std::max(2, endpoint_count());
  FlitParams p = read_flit_params(r, FlitParams{});
  if (p.vcs % 2 != 0) r.fail("vcs", std::to_string(p.vcs) + ": a ring needs an even number of VCs (2, 4, ...): "
                                    "half for packets before the dateline, half after");
  p.vc_classes = 2;
  const bool booksim = torus_dateline(r, tp, p, GridRoutingName::dor) == TorusDateline::booksim;
  const std::vector<int> node = read_placement(r, ctx.endpoints, N, [&](const Json& v, std::string& err) {
    if (const auto n = integer_in(v, 0, N - 1)) return int(*n);
    err = "expected a node index 0.." + std::to_string(N - 1);
    return 0;
  });
  r.finish();

  FlitTopology t;
  for (int i = 0; i < N; ++i) t.router_names.push_back("r" + std::to_string(i));
  // Channel 2i: i -> i+1 (clockwise); 2i+1: i -> i-1. The datelines are the wrap-around channels.
  for (int i = 0; i < N; ++i) {
    t.channels.push_back({i, (i + 1) % N, i == N - 1});
    t.channels.push_back({i, (i + N - 1) % N, i == 0});
  }
  t.endpoint_router = node;
  t.route.assign(size_t(N), std::vector<int>(node.size(), -1));
  for (int i = 0; i < N; ++i)
    for (size_t e = 0; e < node.size(); ++e) {
      const int cw = (node[e] - i + N) % N;
      // Shortest direction; a tie goes clockwise. Every router on a route sees the same choice.
      if (cw != 0) t.route[size_t(i)][e] = 2 * cw <= N ? 2 * i : 2 * i + 1;
    }
  if (booksim) {  // BookSim's dim_order_torus on a 1-D torus (a tie drawn per packet, seed 1)
    t.routing = FlitTopology::Routing::kTorusDor;
    t.cols = N;
    t.rows = 1;
    for (int i = 0; i < N; ++i) t.grid_channels.push_back({2 * i, 2 * i + 1, -1, -1});
    t.inject_any_vc = true;
    t.next_channel = [N](int i, int target, int) {
      const int cw = (target - i + N) % N;
      return cw == 0 ? -1 : 2 * cw <= N ? 2 * i : 2 * i + 1;
    };
  }
  StatsNode topology;
  topology.set(stats::Sum<int64_t>{"nodes", "routers", "ring nodes (summed over steps)"}, N);  // summed over steps, as before typed statistics
  StatsNode& placement = topology.child("placement");
  for (size_t e = 0; e < node.size(); ++e) placement.set(stats::Label<int64_t>{ctx.endpoints[e].c_str(), "", "ring node of this endpoint"}, node[e]);
  build(std::move(t), p, std::move(topology));
}

}  // namespace ahbm
