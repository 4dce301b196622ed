#include "hw/pe/pe.h"

#include "hw/common/base/component.h"

namespace ahbm {

namespace {
// The PE's names in the span recorder and its signals in the trace, in the order the outputs
// have always numbered them: component, its DMA, then the activity, DMA and vector signals.
PeIds register_names(RunContext& run, const sc_core::sc_object& pe, bool ping_pong) {
  const std::string path = component_path(pe);
  PeIds ids;
  ids.component = run.spans.intern(path);
  ids.dma_component = run.spans.intern(path + ".dma");
  ids.sig_activity = run.trace.add_signal(path + ".activity", 3);
  ids.sig_dma = run.trace.add_signal(path + ".dma_busy", 1);
  // The vector unit works beside the GEMM engine only with overlap: then `activity` shows the
  // GEMM engine and this signal the vector unit (docs/waveforms.md).
  if (ping_pong) ids.sig_vector = run.trace.add_signal(path + ".vector_busy", 1);
  return ids;
}
}  // namespace

Pe::Pe(sc_core::sc_module_name name, SimShared& sh, Noc& noc, int group, int pe_in_group, int local_index)
    : sc_core::sc_module(name),
      hbm("hbm"),
      q_in("q_in"),
      state_out("state_out"),
      kv("kv"),
      run_(sh),
      table_(sh),
      group_(group),
      pe_(pe_in_group),
      timing_(sh.cfg),
      ids_(register_names(sh, *this, timing_.ping_pong)),
      datapath_("datapath", sh, timing_, ids_),
      ctx_{sh, sh, timing_, ids_, datapath_.counters(), group, pe_in_group,
           group * sh.cfg.pes_per_group() + pe_in_group, this->name(), my_tiles_},
      dma_("dma", ctx_, hbm, kv, noc),
      kernels_("vector_kernels", ctx_, datapath_, dma_),
      attention_("attention", ctx_, datapath_, dma_, kernels_, q_in, state_out, local_index),
      gemm_("gemm", ctx_, datapath_, dma_, q_in, noc) {
  sh.waits.add(component_path(*this), [this] { return describe_wait(); });
  hbm.register_invalidate_direct_mem_ptr(this, &Pe::invalidate_dmi);
}

void Pe::begin_run() {
  my_tiles_.clear();
  for (int gt : table_.tiles_of_group[size_t(group_)]) {
    const TileRef& t = table_.tiles[size_t(gt)];
    if (tile_has_pe(table_.jobs[size_t(t.job)].tiles[size_t(t.index)], pe_)) my_tiles_.push_back(gt);
  }
  // Each part back to its built state, the processes started in their creation order.
  dma_.begin_run();
  datapath_.begin_run();
  attention_.begin_run();
  gemm_.begin_run();
}

std::string Pe::describe_wait() const {
  std::string gemm = gemm_.describe_wait();
  if (!gemm.empty()) return gemm;
  const size_t total = table_.tiles_of_group[size_t(group_)].size();
  if (attention_.tiles_done() == total) return "";
  std::string out = "computed " + std::to_string(attention_.tiles_done()) + " of " + std::to_string(total) + " Q tiles";
  if (attention_.waiting().what) out += "; compute waits for " + attention_.waiting().str();
  if (dma_.waiting().what) out += "; DMA waits for " + dma_.waiting().str();
  return out;
}

void Pe::report_stats(StatsNode& node) const {
  const PeCounters& c = datapath_.counters();
  node.component = run_.spans.name(ids_.component);
  node.set(PeStats::gemm_busy, to_ns(c.gemm_busy));
  node.set(PeStats::vector_busy, to_ns(c.vector_busy));
  node.set(PeStats::dma_busy, to_ns(c.dma_busy));
  node.set(PeStats::macs, c.macs);
  node.set(PeStats::gemm_tiles, c.gemm_tiles);
  node.set(PeStats::remote_kv_bytes, c.remote_bytes);
  node.set(PeStats::kv_tiles_skipped, c.kv_tiles_skipped);
  node.set(PeStats::macs_skipped, c.macs_skipped);
  node.set(PeStats::vector_ops, c.vector_ops);
  node.set(PeStats::sram_bytes, c.sram_bytes);
  node.set(PeStats::x_bytes_read, c.x_bytes_read);
  node.set(PeStats::kv_append_bytes, c.kv_append_bytes);
  node.set(PeStats::kv_copy_bytes, c.kv_copy_bytes);
}

}  // namespace ahbm
