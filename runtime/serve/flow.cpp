#include "runtime/serve/flow.h"

#include <algorithm>

namespace ahbm::serve {

int64_t pages_held(const Flow& f, const KvPageManager& pages, bool running_only) {
  std::vector<PageId> ids;
  const auto add = [&](SeqId q) {
    if (pages.live(q)) ids.insert(ids.end(), pages.table(q).begin(), pages.table(q).end());
  };
  add(f.parent.sa.seq);
  if (!f.fork_pending)
    for (const Agent& b : f.branches)
      if (!running_only || b.state == AgentState::run) add(b.sa.seq);
  std::sort(ids.begin(), ids.end());
  return int64_t(std::unique(ids.begin(), ids.end()) - ids.begin());
}

}  // namespace ahbm::serve
