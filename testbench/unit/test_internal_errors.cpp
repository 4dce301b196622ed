// Item 7 of issue 14: the model's SC_REPORT_FATAL paths end as an exception mapped to exit
// code 1 (InternalError), never as SystemC's abort (exit 134). Fatal sites provoked on the
// real module: an overlapping placement in an HBM slice and a group's KV read outside the
// stored shard (the PE's DMA-burst fatal goes through the same path; not yet provoked here). The group is built alone
// (its ports bound to itself) with a job that check_jobs would refuse, which is the point:
// these are invariants the checks normally keep.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/common/base/error.h"
#include "hw/common/sim/kv_read.h"
#include "hw/common/sim/sim_context.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/group/group.h"
#include "hw/noc/noc.h"
#include "hw/pe/hbm_slice.h"

using namespace ahbm;

namespace {

// One KV-head group on the ideal NoC (endpoints: host, Q source, its CUBEs), outside a chip.
// `place_kv` = false: the job's shards claim tokens but hold no values, so nothing is placed in
// the slices and every read of that KV is outside the stored data.
struct GroupAlone {
  explicit GroupAlone(bool place_kv) : trace(false), shared(cfg, trace, spans) {
    SimContext::Scope use(context);
    NocContext ctx;
    ctx.params = cfg.noc.params;
    ctx.endpoints = {"host", "qsrc"};
    std::vector<int> cube_endpoints;
    for (int c = 0; c < cfg.group.cubes; ++c) {
      cube_endpoints.push_back(int(ctx.endpoints.size()));
      ctx.endpoints.push_back("g0.cube" + std::to_string(c));
    }
    ctx.clock = shared.clock;
    ctx.trace = &trace;
    ctx.spans = &spans;
    noc = NocRegistry::with_builtin_models().get("ideal").make("noc", ctx);
    group = std::make_unique<Group>("group0", shared, 0, *noc, cube_endpoints, 0);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate

    AttentionJob job;
    job.head_dim = 16;
    job.scale = 0.25f;
    const int rows = 4, tokens = 8;
    job.q.assign(size_t(rows * job.head_dim), 0.f);
    for (int r = 0; r < rows; ++r) job.rows.push_back({0, 100 + r});
    job.agents = {"a"};
    job.tiles = {QTile(0, rows)};
    for (int p = 0; p < cfg.pes_per_group(); ++p) {
      KvShard s;
      s.tokens = tokens;
      if (place_kv) s.k.assign(size_t(tokens * job.head_dim), 1.f), s.v = s.k;
      s.info.assign(size_t(tokens), KvInfo{kSharedOwner, 0});
      job.shards.push_back(std::move(s));
    }
    jobs = {job};
    shared.begin_run(jobs, sc_core::SC_ZERO_TIME);
    group->begin_run();
  }
  ~GroupAlone() {
    SimContext::Scope use(context);
    unwind_threads();
    group.reset();
    noc.reset();
  }

  SimContext context;
  HwConfig cfg;
  TraceSink trace;
  SpanRecorder spans;
  SimShared shared;
  std::vector<AttentionJob> jobs;
  std::unique_ptr<Noc> noc;
  std::unique_ptr<Group> group;
};

// A process of the current context that reads `count` tokens at held-token index `h` of PE 0's
// slice as the group's KV mover does: at the job's place in the group's layout (KvFabric),
// through the mover's port the group bound to that slice.
void spawn_kv_read(GroupAlone& g, uint64_t h, int count) {
  sc_core::sc_spawn([&g, h, count] {
    sc_core::sc_time delay;
    std::vector<unsigned char> scratch;
    read_kv(g.shared, 0, 0, g.group->kv_base(0, 0), h, count, *g.group->mover->slices[0], scratch, delay);
  });
}

std::string internal_error_of(const std::function<void()>& f) {
  try {
    with_internal_errors(f);
  } catch (const InternalError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(InternalErrors, OverlappingHbmPlacementThrowsInsteadOfAborting) {
  SimContext context;
  SimContext::Scope use(context);
  HbmSlice slice("hbm", HbmSliceConfig{});
  const std::vector<float> a(16, 1.f), b(16, 2.f);
  slice.backdoor_write(0, a.data(), a.size());
  const std::string msg = internal_error_of([&] { slice.backdoor_write(32, b.data(), b.size()); });
  EXPECT_NE(msg.find("SystemC fatal ahbm/hbm: overlapping placement at byte 32 of hbm"), std::string::npos) << msg;
}

TEST(InternalErrors, KvReadOutsideTheStoredShardIsAnInternalError) {
  GroupAlone g(true);
  SimContext::Scope use(g.context);
  spawn_kv_read(g, 0, 8);  // the whole stored shard: fine
  EXPECT_EQ(internal_error_of([] { sc_core::sc_start(); }), "");
  spawn_kv_read(g, 6, 4);  // tokens 6..9 of an 8-token shard
  const std::string msg = internal_error_of([] { sc_core::sc_start(); });
  EXPECT_NE(msg.find("SystemC fatal ahbm/kv: KV read outside the stored shard"), std::string::npos) << msg;
}
