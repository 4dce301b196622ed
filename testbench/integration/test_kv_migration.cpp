// P-B-D's KV migration layer by layer (issue 39 item 4; runtime/serve/engine.cpp layer_migration,
// docs/serving.md "P-B-D mode"): each layer's KV leaves the prefill pool when that layer's prefill
// ends, overlapping the next layers, against the single transfer after the whole prefill.
#include <gtest/gtest.h>

#include <string>

#include "runtime/serve/engine.h"
#include "runtime/serve/serve_report.h"
#include "runtime/serve/serve_summary.h"
#include "runtime/serve/workload.h"
#include "test_runtime_support.h"
#include "test_support.h"

namespace ahbm {
namespace {

using serve::KvTransfer;
using serve::ServeResult;
using serve::Workload;

constexpr int kLayers = 4;

std::string scenario_path() {
  static const std::string p = test::write_temp(test::temp_dir("kv-migration"), "model.json", R"({
    "name": "kv_migration", "model": {"head_dim": 32, "num_q_heads": 4, "num_kv_heads": 2, "layers": 4, "dtype": "fp16"},
    "kv": {"page_tokens": 16}, "shared_prefix_tokens": 256, "seed": 3,
    "agents": [{"name": "a0", "new_tokens": 16, "decode_tokens": 3}],
    "phases": [{"type": "prefill", "tokens": 64}, {"type": "fanout"}, {"type": "decode", "steps": 3}]
  })");
  return p;
}

// `workflows` chats (prompt 512, `answer` tokens) arriving at t = 0 on a P-B-D chip of one prefill
// and one decode group, the KV migrated as `migration` says over `path`.
Workload chats(int workflows, const std::string& migration, const std::string& path = "noc", int answer = 3) {
  const Json j = {{"name", "w"},
                  {"scenario", scenario_path()},
                  {"seed", 5},
                  {"arrival", {{"process", "timestamps"}, {"times_ns", std::vector<double>(size_t(workflows), 0.0)}}},
                  {"templates", {{{"name", "chat"}, {"prompt_tokens", 512}, {"answer_tokens", answer}}}},
                  {"scheduler",
                   {{"pbd", {{"prefill_groups", 1}, {"buffer_max", 4}, {"kv_path", path}, {"kv_migration", migration}}}}}};
  return serve::parse_workload(j, "workload.json");
}

HwConfig chip(double host_gbps = 64) {
  HwConfig hw = test::small_hw(2, 4);
  hw.groups = 2;
  hw.host.bandwidth_gbps = host_gbps;
  return hw;
}

// The prefill step of a one-workflow run: the first step of pool 0.
serve::StepSample prefill_step(const ServeResult& r) {
  for (const serve::StepSample& s : r.steps)
    if (s.pool == 0) return s;
  ADD_FAILURE() << "no prefill step";
  return {};
}

// One workflow, the decode pool idle: layer l's KV (X / L bytes) is ready at S + l T / L, the
// messages leave back to back once ready, the last arrives the latency after it is sent. With the
// path faster than a layer (X / (L B) <= T / L) only the last layer's send follows the prefill:
// the transfer starts at S + T / L and ends at S + T + X / (L B) + alpha; the whole transfer after
// the prefill ended at S + T + X / B + alpha. The workflow ends earlier by the difference.
TEST(KvMigration, LayerByLayerOverlapsThePrefillAsTheClosedFormSays) {
  const ServeResult whole = serve::serve(chats(1, "whole"), chip(), {});
  const ServeResult layer = serve::serve(chats(1, "layer"), chip(), {});
  ASSERT_EQ(whole.pbd->transfers.size(), 1u);
  ASSERT_EQ(layer.pbd->transfers.size(), 1u);
  const serve::StepSample p = prefill_step(layer);
  const double S = p.start_ns, T = p.ns, E = S + T;
  const KvTransfer &w = whole.pbd->transfers[0], &l = layer.pbd->transfers[0];
  const double alpha = layer.pbd->path_latency_ns, B = layer.pbd->path_gbps, X = double(l.bytes);
  ASSERT_GT(B, 0.0);
  ASSERT_LE(X / kLayers / B, T / kLayers) << "the closed form below is the compute-bound case";
  EXPECT_DOUBLE_EQ(w.start_ns, E);
  EXPECT_NEAR(w.ns, alpha + X / B, 1e-6);
  EXPECT_NEAR(l.start_ns, S + T / kLayers, 1e-6);
  EXPECT_NEAR(l.start_ns + l.ns, E + X / kLayers / B + alpha, 1e-6);
  EXPECT_NEAR(l.overlap_ns, E - l.start_ns, 1e-6);
  EXPECT_EQ(w.overlap_ns, 0.0);
  // The decode pool starts when the KV is in: the workflow ends earlier by what the overlap saved.
  const double saved = (w.start_ns + w.ns) - (l.start_ns + l.ns);
  EXPECT_NEAR(saved, X / B * (kLayers - 1) / kLayers, 1e-6);
  EXPECT_NEAR(whole.workflows[0].done_ns - layer.workflows[0].done_ns, saved, 1e-6);
  // The summary and the trace say so.
  const Json s = serve::to_json(serve::serve_summary(chats(1, "layer"), chip(), layer));
  EXPECT_EQ(s["pbd"]["transfer"]["migration"], "layer");
  EXPECT_NEAR(s["pbd"]["transfer"]["overlap_ns"].get<double>(), l.overlap_ns, 1e-9);
  EXPECT_EQ(s["workload"]["scheduler"]["pbd"]["kv_migration"], "layer");
  EXPECT_NE(serve::serve_trace_json(layer).find("\"overlap_ns\""), std::string::npos);
  const Json sw = serve::to_json(serve::serve_summary(chats(1, "whole"), chip(), whole));
  EXPECT_FALSE(sw["pbd"]["transfer"].contains("migration"));  // a whole transfer's summary is as before
  EXPECT_FALSE(sw["workload"]["scheduler"]["pbd"].contains("kv_migration"));
}

// A slow host link (kv_path host at 0.05 GB/s): the link, not the prefill, sets the pace; the
// first layer leaves at S + T / L and the L messages follow back to back.
TEST(KvMigration, ASlowPathSendsTheLayersBackToBack) {
  const ServeResult layer = serve::serve(chats(1, "layer", "host"), chip(0.05), {});
  const ServeResult whole = serve::serve(chats(1, "whole", "host"), chip(0.05), {});
  const serve::StepSample p = prefill_step(layer);
  const double S = p.start_ns, T = p.ns;
  const KvTransfer &l = layer.pbd->transfers.at(0), &w = whole.pbd->transfers.at(0);
  const double alpha = layer.pbd->path_latency_ns, B = layer.pbd->path_gbps, X = double(l.bytes);
  ASSERT_GT(X / kLayers / B, T / kLayers) << "the closed form below is the link-bound case";
  EXPECT_NEAR(l.start_ns, S + T / kLayers, 1e-6);
  EXPECT_NEAR(l.ns, X / B + alpha, 1e-3);  // every byte at B, from the first layer's end on
  EXPECT_NEAR((w.start_ns + w.ns) - (l.start_ns + l.ns), T - T / kLayers, 1e-3);
}

// Several workflows with long answers, so the decode pool is mostly stepping when a prefill ends:
// whichever it pulls after they waited in the buffer move as one whole transfer would (their
// destination was not known before); one pulled as its prefill ended arrives sooner after the
// pull than a whole transfer; the link carries one transfer at a time; every workflow finishes,
// every page comes back.
TEST(KvMigration, SequencesThatWaitedInTheBufferMoveWhole) {
  const ServeResult r = serve::serve(chats(6, "layer", "noc", 64), chip(), {});
  ASSERT_EQ(r.workflows.size(), 6u);
  for (const serve::WorkflowRecord& f : r.workflows) EXPECT_GT(f.done_ns, 0.0);
  EXPECT_EQ(r.in_use_end, 0);
  EXPECT_EQ(r.allocations, r.frees);
  const double alpha = r.pbd->path_latency_ns, B = r.pbd->path_gbps;
  int overlapped = 0, whole = 0;
  for (size_t i = 0; i < r.pbd->transfers.size(); ++i) {
    const KvTransfer& t = r.pbd->transfers[i];
    if (i > 0) {
      EXPECT_GE(t.start_ns, r.pbd->transfers[i - 1].start_ns + r.pbd->transfers[i - 1].ns - 1e-6);
    }
    if (t.overlap_ns > 0) {
      ++overlapped;
      EXPECT_LT(t.ns - t.overlap_ns, alpha + double(t.bytes) / B) << "transfer " << i << ": after the pull";
    } else {
      ++whole;
      EXPECT_NEAR(t.ns, alpha + double(t.bytes) / B, 1e-6) << "transfer " << i;
    }
  }
  EXPECT_GT(overlapped, 0);
  EXPECT_GT(whole, 0) << "the decode pool was busy when some prefills ended";
}

TEST(KvMigration, AnUnknownModeIsAnInputErrorNamingTheField) {
  const std::string e = test::input_error_of([] { chats(1, "per_layer"); });
  EXPECT_NE(e.find("kv_migration"), std::string::npos) << e;
  EXPECT_NE(e.find("layer"), std::string::npos) << e;
  EXPECT_NE(e.find("whole"), std::string::npos) << e;
}

}  // namespace
}  // namespace ahbm
