// Output levels and writers of latency.csv / trace.json (runtime/report/trace_level.h,
// trace_json.h, gzip_stream.h) on hand-made spans: what each level keeps, the streaming JSON
// writer against nlohmann::json's own serialisation, and gzip output read back with zlib.
#include <gtest/gtest.h>

#include <zlib.h>

#include <set>
#include <sstream>
#include <string>

#include "hw/common/base/error.h"
#include "hw/common/sim/sim_context.h"
#include "hw/common/observe/span_recorder.h"
#include "runtime/report/gzip_stream.h"
#include "runtime/report/latency.h"
#include "runtime/report/trace_json.h"
#include "runtime/report/trace_level.h"

using namespace ahbm;
using report::TraceLevel;

namespace {

sc_core::sc_time ps(int64_t t) { return sc_core::sc_time(double(t), sc_core::SC_PS); }

// Two steps; in each, two PEs run 3 tiles (DMA, then GEMM and softmax) while a reducer merges and
// the runtime annotates the step and the agent's latency.
void record_two_steps(SpanRecorder& rec) {
  using K = ComponentInfo::Kind;
  for (int p = 0; p < 2; ++p) {
    const std::string pe = "group0.cube0.pe" + std::to_string(p);
    rec.declare(pe, ComponentInfo{K::pe, 0, 0, p, "pe" + std::to_string(p)});
    rec.declare(pe + ".dma", ComponentInfo{K::pe_dma, 0, 0, p, "pe" + std::to_string(p) + ".dma"});
  }
  rec.declare("group0.cube0.reducer", ComponentInfo{K::reducer, 0, 0, -1, "reducer"});
  const int star = rec.intern("*");
  for (int step = 0; step < 2; ++step) {
    const int64_t t0 = step * 100000;
    const int phase = rec.intern(step == 0 ? "fanout" : "decode");
    rec.record(ps(t0), ps(t0 + 90000), rec.intern("runtime.step"), rec.intern(step == 0 ? "fanout" : "decode[0]"),
               phase, star, 0, 0);
    rec.record(ps(t0), ps(t0 + 85500), rec.intern("agent.a0"), rec.intern("attention"), phase, rec.intern("a0"), 4, 0);
    for (int p = 0; p < 2; ++p) {
      const std::string pe = "group0.cube0.pe" + std::to_string(p);
      for (int tile = 0; tile < 3; ++tile) {
        const int64_t t = t0 + 1000 + tile * 20000 + p * 333;
        rec.record(ps(t), ps(t + 5000), rec.intern(pe + ".dma"), rec.intern("dma_kv"), phase, star, 0, 4096);
        rec.record(ps(t + 5000), ps(t + 12001), rec.intern(pe), rec.intern("gemm_qk"), phase, star, 4, 0);
        rec.record(ps(t + 12001), ps(t + 15000), rec.intern(pe), rec.intern("softmax"), phase, star, 4, 0);
      }
    }
    rec.record(ps(t0 + 70000), ps(t0 + 80000), rec.intern("group0.cube0.reducer"), rec.intern("merge"), phase, star, 4, 512);
  }
}

std::string trace_text(const SpanRecorder& rec) {
  std::ostringstream os;
  report::write_trace_json(os, rec);
  return os.str();
}

}  // namespace

TEST(TraceLevels, NamesParseAndAutoResolvesBySpanCount) {
  for (const char* n : {"auto", "summary", "phase", "step", "tile"})
    EXPECT_STREQ(report::trace_level_name(report::parse_trace_level(n)), n);
  try {
    report::parse_trace_level("tiles");
    FAIL() << "accepted an unknown level";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"tiles\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("auto, summary, phase, step, tile"), std::string::npos) << e.what();
  }
  EXPECT_EQ(report::resolve_trace_level(TraceLevel::automatic, report::kAutoTileSpans), TraceLevel::tile);
  EXPECT_EQ(report::resolve_trace_level(TraceLevel::automatic, report::kAutoTileSpans + 1), TraceLevel::step);
  EXPECT_EQ(report::resolve_trace_level(TraceLevel::phase, 1), TraceLevel::phase);
}

TEST(TraceLevels, EachLevelKeepsWhatItPromises) {
  SimContext ctx;
  SimContext::Scope use_ctx(ctx);
  SpanRecorder rec;
  record_two_steps(rec);
  ASSERT_EQ(rec.spans().size(), 2u * (2 + 2 * 3 * 3 + 1));

  EXPECT_TRUE(report::spans_at_level(rec, TraceLevel::summary).spans().empty());

  const SpanRecorder phase = report::spans_at_level(rec, TraceLevel::phase);
  ASSERT_EQ(phase.spans().size(), 4u);  // runtime.step and agent.a0, per step
  for (const Span& s : phase.spans()) EXPECT_TRUE(report::is_annotation_component(phase.name(s.component)));

  // Step: per step, one span per PE (GEMM + softmax folded: "pe_tiles", rows summed) and one per
  // PE DMA (one activity: its name kept, bytes summed); the reducer and annotations as they are.
  const SpanRecorder step = report::spans_at_level(rec, TraceLevel::step);
  ASSERT_EQ(step.spans().size(), 2u * (2 + 2 + 2 + 1));
  std::map<std::string, int> per_component;
  for (const Span& s : step.spans()) {
    const std::string comp = step.name(s.component), act = step.name(s.activity);
    ++per_component[comp];
    if (comp == "group0.cube0.pe1") {
      EXPECT_EQ(act, "pe_tiles");
      EXPECT_EQ(s.rows, 6 * 4);
      const int64_t t0 = s.start < ps(100000) ? 0 : 100000;
      EXPECT_EQ(s.start, ps(t0 + 1000 + 333 + 5000));          // the first tile's GEMM
      EXPECT_EQ(s.end, ps(t0 + 1000 + 2 * 20000 + 333 + 15000));  // the last tile's softmax
    }
    if (comp == "group0.cube0.pe0.dma") {
      EXPECT_EQ(act, "dma_kv");
      EXPECT_EQ(s.bytes, 3 * 4096);
    }
    if (comp == "group0.cube0.reducer") {
      EXPECT_EQ(act, "merge");
    }
  }
  for (const auto& [comp, n] : per_component) EXPECT_EQ(n, 2) << comp;  // once per step each
  // Names keep their ids: the annotations are the same spans at every level.
  for (size_t i = 0; i < phase.spans().size(); ++i) EXPECT_EQ(phase.name(phase.spans()[i].activity), rec.name(phase.spans()[i].activity));
}

TEST(TraceLevels, StreamedTraceIsWhatNlohmannWritesForTheSameEvents) {
  SimContext ctx;
  SimContext::Scope use_ctx(ctx);
  SpanRecorder rec;
  record_two_steps(rec);
  // Names JSON must escape, and times that are not whole nanoseconds.
  const int odd = rec.intern("agent.we\"ird\\name\t\x01");
  rec.record(ps(123456789), ps(987654321), odd, rec.intern("attention"), rec.intern("decode"), rec.intern("x\ny"), 1, 2);
  const std::string text = trace_text(rec);
  const Json doc = Json::parse(text);
  // Key order, number formatting and escapes as nlohmann::json::dump() writes them.
  EXPECT_EQ(doc.dump() + "\n", text);
  EXPECT_GT(doc["traceEvents"].size(), rec.spans().size());
  std::set<std::string> names;
  for (const Json& e : doc["traceEvents"])
    if (e["ph"] == "X") names.insert(e["args"]["component"].get<std::string>());
  EXPECT_EQ(names.count("agent.we\"ird\\name\t\x01"), 1u);
}

TEST(TraceLevels, LatencyCsvTimesToThePicosecond) {
  SimContext ctx;
  SimContext::Scope use_ctx(ctx);
  SpanRecorder rec;
  const int c = rec.intern("host"), a = rec.intern("q_load"), p = rec.intern("fanout"), g = rec.intern("*");
  rec.record(ps(1790000), ps(1790001), c, a, p, g, 3, 4);
  rec.record(ps(5), ps(123456789012), c, a, p, g, 0, 0);
  std::ostringstream os;
  report::write_latency_csv(os, rec);
  EXPECT_EQ(os.str(),
            "start_ns,end_ns,component,activity,phase,agent,rows,bytes\n"
            "0.005,123456789.012,host,q_load,fanout,*,0,0\n"
            "1790.000,1790.001,host,q_load,fanout,*,3,4\n");
}

TEST(TraceLevels, GzipTraceReadsBackAsTheJsonText) {
  SimContext ctx;
  SimContext::Scope use_ctx(ctx);
  SpanRecorder rec;
  record_two_steps(rec);
  const std::string text = trace_text(rec);
  std::ostringstream packed;
  {
    report::GzipOstream gz(packed);
    report::write_trace_json(gz, rec);
    gz.finish();
  }
  const std::string z = packed.str();
  ASSERT_GE(z.size(), 18u);
  EXPECT_EQ(uint8_t(z[0]), 0x1f);  // gzip magic
  EXPECT_EQ(uint8_t(z[1]), 0x8b);
  EXPECT_LT(z.size(), text.size() / 3);
  // Inflated with zlib's gzip decoder (windowBits 15 + 16).
  z_stream s{};
  ASSERT_EQ(inflateInit2(&s, 15 + 16), Z_OK);
  std::string out(text.size() + 1024, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(z.data()));
  s.avail_in = uInt(z.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = uInt(out.size());
  EXPECT_EQ(inflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  inflateEnd(&s);
  EXPECT_EQ(out, text);
  // The same input gives the same bytes (no time stamp in the header).
  std::ostringstream again;
  {
    report::GzipOstream gz(again);
    report::write_trace_json(gz, rec);
  }
  EXPECT_EQ(again.str(), z);
}
