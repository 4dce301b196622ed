#include "hw/chip/chip.h"

#include "hw/common/base/component.h"
#include "hw/common/sim/sim_context.h"

namespace ahbm {

std::vector<int> Chip::groups_of(const HwConfig& cfg, const std::vector<AttentionJob>& jobs) {
  std::vector<char> used(size_t(cfg.groups), 0);
  for (const AttentionJob& j : jobs)
    if (!j.tiles.empty()) used.at(size_t(j.group)) = 1;
  std::vector<int> groups;
  for (int g = 0; g < cfg.groups; ++g)
    if (used[size_t(g)]) groups.push_back(g);
  return groups;
}

std::vector<std::string> Chip::noc_endpoints(const HwConfig& cfg, const std::vector<int>& group_ids) {
  std::vector<std::string> e = {"host", "qsrc"};
  for (int g : group_ids)
    for (int c = 0; c < cfg.group.cubes; ++c) e.push_back("g" + std::to_string(g) + ".cube" + std::to_string(c));
  return e;
}

void check_noc_config(const HwConfig& cfg, const NocRegistry& nocs, const std::string& hw_file) {
  SimContext context;
  SimContext::Scope use_context(context);
  std::vector<int> every_group(size_t(cfg.groups));
  for (int g = 0; g < cfg.groups; ++g) every_group[size_t(g)] = g;
  NocContext ctx;
  ctx.params = cfg.noc.params;
  ctx.config_file = hw_file;
  ctx.clock = Clock(cfg.clock_ghz);
  ctx.endpoints = Chip::noc_endpoints(cfg, every_group);
  with_internal_errors([&] { nocs.get(cfg.noc.model, hw_file).make("noc", ctx); });
}

Chip::Chip(sc_core::sc_module_name name, SimShared& sh, const NocRegistry& nocs, const std::string& hw_file,
           std::vector<int> group_ids)
    : sc_core::sc_module(name), active_groups(std::move(group_ids)), sh_(sh) {
  const HwConfig& cfg = sh.cfg;

  // Endpoints: host, Q source, then every CUBE of every active group.
  NocContext ctx;
  ctx.params = cfg.noc.params;
  ctx.config_file = hw_file;
  ctx.clock = sh.clock;
  ctx.trace = &sh.trace;
  ctx.spans = &sh.spans;
  // A packet's tag is a global tile index (NoC spans carry that tile's phase and agent), or
  // kKvTag for KV moved between PEs (spans carry its job's first tile's phase).
  ctx.span_hook = [&sh](const std::string& component, const char* activity, const NocPacket& p,
                        const sc_core::sc_time& start, const sc_core::sc_time& end) {
    // A weight GEMM's packet (an X-stationary W tile, a W-stationary X chunk or K-split partial):
    // its job's operator and phase.
    const int gemm_job = p.tag == kGemmTag          ? std::static_pointer_cast<const GemmTileMessage>(p.payload)->job
                         : p.tag == kGemmXTag       ? sh.gemm.x_chunks[size_t(std::static_pointer_cast<const GemmXMessage>(p.payload)->chunk)].job
                         : p.tag == kGemmPartialTag ? std::static_pointer_cast<const GemmPartialMessage>(p.payload)->job
                                                    : -1;
    if (gemm_job >= 0) {
      sh.gemm_span(start, end, sh.spans.intern(component), sh.spans.intern(activity), gemm_job, 0, int64_t(p.bytes));
      return;
    }
    size_t gt = size_t(p.tag);
    if (p.tag == kKvTag) {
      const int job = std::static_pointer_cast<const KvMessage>(p.payload)->job;
      for (gt = 0; gt + 1 < sh.tiles.size() && sh.tiles[gt].job != job;) ++gt;
    }
    const TileRef& t = sh.tiles.at(gt);
    sh.span(start, end, sh.spans.intern(component), activity, t, t.rows(), int64_t(p.bytes));
  };
  ctx.endpoints = noc_endpoints(cfg, active_groups);
  std::vector<std::vector<int>> group_endpoints(size_t(cfg.groups));
  for (size_t a = 0; a < active_groups.size(); ++a)
    for (int c = 0; c < cfg.group.cubes; ++c)
      group_endpoints[size_t(active_groups[a])].push_back(2 + int(a) * cfg.group.cubes + c);
  noc = nocs.get(cfg.noc.model, hw_file).make("noc", ctx);
  sh.spans.declare(component_path(*noc), {ComponentInfo::Kind::noc, -1, -1, -1, component_path(*noc)});
  host = std::make_unique<Host>("host", sh);
  noc->attach(0, host.get());

  std::vector<std::vector<QCredits*>> group_buffers(size_t(cfg.groups));
  for (int g : active_groups) {
    groups.push_back(std::make_unique<Group>(("group" + std::to_string(g)).c_str(), sh, g, *noc,
                                             group_endpoints[size_t(g)], 0));
    for (auto& cube : groups.back()->cubes) group_buffers[size_t(g)].push_back(&cube->q_buffer);
  }
  q_source = std::make_unique<QSource>("q_source", sh, *noc, 1, group_buffers, group_endpoints);
  // The weight streamer: a port to every slice of the active groups, in chip PE order.
  const size_t chip_pes = size_t(cfg.groups) * size_t(cfg.pes_per_group());
  std::vector<Pe*> pes(chip_pes, nullptr);
  std::vector<int> pe_endpoints(chip_pes, -1), ports(chip_pes, -1);
  std::vector<HbmSlice*> slices;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const int g = active_groups[gi];
    for (int c = 0; c < cfg.group.cubes; ++c)
      for (int p = 0; p < cfg.cube.pes; ++p) {
        const size_t cp = size_t(g) * size_t(cfg.pes_per_group()) + size_t(c) * size_t(cfg.cube.pes) + size_t(p);
        pes[cp] = groups[gi]->cubes[size_t(c)]->pes[size_t(p)].get();
        pe_endpoints[cp] = group_endpoints[size_t(g)][size_t(c)];
        ports[cp] = int(slices.size());
        slices.push_back(groups[gi]->cubes[size_t(c)]->slices[size_t(p)].get());
      }
  }
  sh.pe_endpoint = pe_endpoints;  // K-split partials go PE to PE (hw/pe/gemm_program.cpp)
  w_streamer = std::make_unique<WeightStreamer>("w_streamer", sh, *noc, std::move(pes), std::move(pe_endpoints), std::move(ports));
  for (size_t i = 0; i < slices.size(); ++i)
    links_.bind(w_streamer->slices, slices[i]->socket, "w_streamer_slice" + std::to_string(i) + "_check", sh.tlm_checks,
                [sp = slices[i]] { return std::make_pair(uint64_t(0), sp->last()); });
  QSource& q = *q_source;
  links_.bind(host->q_out, q.socket, "q_check", sh.tlm_checks, [qp = &q] { return std::make_pair(uint64_t(0), qp->last()); });
}

void Chip::begin_run() {
  noc->begin_run();
  q_source->begin_run();
  host->begin_run();
  for (auto& g : groups) g->begin_run();
  w_streamer->begin_run();
}

void Chip::report_stats(StatsNode& node) const {
  StatsNode& list = node.list(ChipStats::groups);
  for (const auto& g : groups) g->report_stats(list.child(g->basename()));
  noc->report_stats(node.child(ChipStats::noc));
  host->report_stats(node.child(ChipStats::host));
}

}  // namespace ahbm
