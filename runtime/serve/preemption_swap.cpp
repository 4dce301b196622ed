// Preemption by swap: the pages of a preempted workflow's parent and running branches go out to
// host memory over the host link, and come back the same way when it is readmitted; both
// transfers run at its pool's next step boundary, before the step's jobs.
#include "hw/common/model/engines.h"
#include "runtime/serve/preemption.h"

namespace ahbm::serve {

namespace {

class SwapPreemption final : public PreemptionRule {
 public:
  void preempt(Flow& f, const KvPageManager& pages, int parent_tokens, PreemptionSink& out,
               PreemptionEvent& e) const override {
    const uint64_t bytes = uint64_t(pages_held(f, pages, true)) * out.result.page_bytes;
    e.bytes = bytes;
    e.ns = host_link_ns(out.host, bytes);
    f.parent.swapped_tokens = parent_tokens;
    for (Agent& b : f.branches)
      b.swapped_tokens = b.state == AgentState::run ? pages.length(b.sa.seq) - parent_tokens : 0;
    out.swap_pending_ns += e.ns;
    out.swap_pending_bytes += bytes;
    out.result.swap_out_bytes += bytes;
    ++out.result.swap_outs;
    out.record.swapped_bytes += bytes;
  }

  // Its pages come back placed by the balanced rule, as its pages after the prompt.
  void readmit(Flow& f, KvPageManager& pages, PreemptionSink& out, PreemptionEvent& e) const override {
    const PlacePage place = [&f](const KvPageManager& kv, SeqId q) { return f.placer(kv, q); };
    const int64_t before = pages.in_use();
    pages.append(f.parent.sa.seq, f.parent.sa.origin, f.parent.swapped_tokens, place, /*cached=*/true);
    f.parent.swapped_tokens = 0;
    for (Agent& b : f.branches) {
      b.sa.seq = pages.fork(f.parent.sa.seq);
      pages.append(b.sa.seq, b.sa.origin, b.swapped_tokens, place, /*cached=*/true);
      b.sa.length = pages.length(b.sa.seq);
      b.swapped_tokens = 0;
    }
    // Restored K/V arrive by the swap (timed here), so no step is charged their writes.
    f.kv_since = pages.writes();
    e.pages = pages.in_use() - before;
    e.bytes = uint64_t(e.pages) * out.result.page_bytes;
    e.ns = host_link_ns(out.host, e.bytes);
    out.swap_pending_ns += e.ns;
    out.swap_pending_bytes += e.bytes;
    out.result.swap_in_bytes += e.bytes;
    ++out.result.swap_ins;
  }
};

}  // namespace

PreemptionEntry swap_preemption() {
  return {"swap", "a preempted workflow's KV pages go to host memory over the host link and come back on readmission",
          std::make_shared<SwapPreemption>()};
}

}  // namespace ahbm::serve
