#include "hw/chip/sim_shared.h"

#include <algorithm>

namespace ahbm {

SimShared::SimShared(const HwConfig& c, const std::vector<AttentionJob>& j, TraceSink& t, SpanRecorder& s)
    : cfg(c), clock(c.clock_ghz), jobs(j), trace(t), spans(s), guard(s) {
  none_agent = spans.intern("-");
  tiles_of_group.resize(size_t(cfg.groups));
  // Jobs share the Q source: send their tiles round-robin so concurrent groups start together.
  size_t most = 0;
  for (const auto& job : jobs) most = std::max(most, job.tiles.size());
  for (size_t i = 0; i < most; ++i) {
    for (size_t jb = 0; jb < jobs.size(); ++jb) {
      const AttentionJob& job = jobs[jb];
      if (i >= job.tiles.size()) continue;
      TileRef r;
      r.job = int(jb);
      r.index = int(i);
      r.row_begin = job.tiles[i].row_begin;
      r.row_end = job.tiles[i].row_end;
      r.group = job.group;
      r.phase_id = spans.intern(job.phase);
      int agent = job.rows.empty() ? -1 : job.rows[size_t(r.row_begin)].agent;
      for (int row = r.row_begin; row < r.row_end; ++row)
        if (job.rows[size_t(row)].agent != agent) agent = -1;
      r.agent_id = agent >= 0 && size_t(agent) < job.agents.size() ? spans.intern(job.agents[size_t(agent)])
                                                                 : spans.intern("*");
      tiles_of_group.at(size_t(job.group)).push_back(int(tiles.size()));
      tiles.push_back(r);
    }
  }
}

}  // namespace ahbm
