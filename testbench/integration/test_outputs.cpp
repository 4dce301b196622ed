// Report files of a simulated run: waves.vcd/.gtkw (GTKWave), trace.json (Perfetto),
// stats.json, latency percentiles in summary.json, progress reporting. (The percentile
// arithmetic is in unit/test_report_spans.cpp; vcd2fst and the terminal progress line in
// e2e/test_outputs_cli.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "test_outputs_common.h"
#include "test_trace_exact.h"

using namespace ahbm;
using ahbm::test::ScratchDir;
using ahbm::test::read_file;
using ahbm::test::vcd_signals;

namespace {

double sum_busy(const Json& by_activity) {
  double t = 0;
  for (const auto& [k, v] : by_activity.items()) t += v.get<double>();
  return t;
}

// The path of every counter of a stats.json "chip" tree, a list's elements written once as "[]"
// (report::stats_docs's convention); a label's value may itself be an array of numbers.
void counter_paths(const Json& obj, const std::string& path, std::set<std::string>& out) {
  for (const auto& [name, v] : obj.items()) {
    if (v.is_object()) {
      counter_paths(v, path + name + ".", out);
    } else if (v.is_array() && !v.empty() && v.front().is_object()) {
      for (const Json& e : v) counter_paths(e, path + name + "[].", out);
    } else {
      out.insert(path + name);
    }
  }
}

}  // namespace

TEST(Outputs, GtkwNamesOnlySignalsOfTheVcdGroupedAndTranslated) {
  ScratchDir s("gtkw");
  const RunOutput run = test::default_run(s.path("run"));
  const auto signals = vcd_signals(read_file(s.path("run/waves.vcd")));
  ASSERT_GT(signals.size(), 32u * 2);
  std::istringstream gtkw(read_file(s.path("run/waves.gtkw")));
  std::set<std::string> listed;
  std::vector<std::string> groups, filters;
  int open = 0;
  std::string line, flags;
  while (std::getline(gtkw, line)) {
    if (line.empty() || line[0] == '[' || line[0] == '*') continue;
    if (line[0] == '@') flags = line;
    else if (line[0] == '^') filters.push_back(line.substr(line.find(' ') + 1));
    else if (line[0] == '-') {
      // Group begin (0x800000) / end (0x1000000) flags precede the label.
      const unsigned long f = std::stoul(flags.substr(1), nullptr, 16);
      if (f & 0x800000) groups.push_back(line.substr(1)), ++open;
      if (f & 0x1000000) --open;
      EXPECT_GE(open, 0);
    } else {
      std::string name = line;
      if (name[0] == '+') name = name.substr(name.find("} ") + 2);  // alias
      EXPECT_TRUE(signals.count(name)) << "waves.gtkw names " << name << ", absent from waves.vcd";
      listed.insert(name);
    }
  }
  EXPECT_EQ(open, 0);
  EXPECT_EQ(listed.size(), signals.size()) << "every VCD signal is shown";
  const std::vector<std::string> expected_groups = {"Q source + NoC", "group0 / cube0", "group0 / cube1", "group0 / cube2",
                                                    "group0 / cube3", "group0 inter-CUBE links", "host", "chip power"};
  EXPECT_EQ(groups, expected_groups);
  EXPECT_TRUE(signals.count("ahbm.host.phase[7:0]"));

  // Each filter file exists next to the save file and names every code the VCD uses.
  ASSERT_FALSE(filters.empty());
  for (const auto& f : std::set<std::string>(filters.begin(), filters.end())) {
    const std::string text = read_file(s.path("run/" + f));
    ASSERT_FALSE(text.empty()) << f;
    if (f.find("activity") != std::string::npos)
      for (const char* name : {"idle", "q_read", "gemm_qk", "softmax", "gemm_pv", "send_state"})
        EXPECT_NE(text.find(name), std::string::npos) << name;
    else
      EXPECT_NE(text.find(" " + run.plan.jobs[0].phase + "\n"), std::string::npos);
  }
  // PE activity values that occur in the VCD are all 0..5 (= the filter's entries).
  const std::string vcd = read_file(s.path("run/waves.vcd"));
  const std::string id = signals.at("ahbm.group0.cube2.pe5.activity[2:0]");
  std::set<int> seen;
  for (const auto& [t, v] : test::vcd_changes(vcd, id)) seen.insert(int(v));
  EXPECT_EQ(seen, (std::set<int>{0, 1, 2, 3, 4, 5}));
}

// run's trace.json for exact readers (issue 44 item 5): ts and dur read as exact decimals are
// whole ns, ts + dur of a child never passes its parent's end (the old 1-ulp-up doubles did, 51
// times in this run), every track is named; the trace ends where the run does.
TEST(Outputs, TraceJsonTimesAreWholeNsAndNestExactly) {
  ScratchDir s("trace-exact");
  const RunOutput run = test::default_run(s.path("run"));
  const test::TraceExactness t = test::check_trace_exactness(read_file(s.path("run/trace.json")));
  EXPECT_GT(t.slices, 1000u);
  EXPECT_TRUE(t.not_whole_ns.empty()) << "ts/dur not whole ns:" << test::first_few(t.not_whole_ns);
  EXPECT_TRUE(t.unnamed_tracks.empty()) << "tracks without a name:" << test::first_few(t.unnamed_tracks);
  EXPECT_TRUE(t.partial_overlaps.empty()) << "slices overlapping without nesting:" << test::first_few(t.partial_overlaps);
  EXPECT_EQ(t.last_end_ns, std::llround(run.summary.total_ns));
}

TEST(Outputs, TraceJsonIsNestedTraceEventFormatMatchingBusyTimes) {
  ScratchDir s("trace");
  const RunOutput run = test::default_run(s.path("run"));
  const Json doc = Json::parse(read_file(s.path("run/trace.json")));
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::map<int, std::string> process;
  std::map<std::pair<int, int>, std::string> thread;
  std::map<std::pair<int, int>, std::vector<const Json*>> slices;
  for (const Json& e : doc["traceEvents"]) {
    if (e["ph"] == "C") continue;  // the power counters (test_power.cpp)
    for (const char* k : {"ph", "name", "pid", "tid"}) ASSERT_TRUE(e.contains(k)) << e.dump();
    const std::string ph = e["ph"];
    const int pid = e["pid"], tid = e["tid"];
    if (ph == "M") {
      if (e["name"] == "process_name") process[pid] = e["args"]["name"];
      if (e["name"] == "thread_name") thread[{pid, tid}] = e["args"]["name"];
      continue;
    }
    ASSERT_EQ(ph, "X");
    for (const char* k : {"ts", "dur", "cat", "args"}) ASSERT_TRUE(e.contains(k)) << e.dump();
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    slices[{pid, tid}].push_back(&e);
  }
  // Every track is named; PEs sit in their CUBE's process; one track per agent.
  std::set<std::string> agents;
  for (const auto& [key, list] : slices) {
    ASSERT_TRUE(thread.count(key) && process.count(key.first));
    const std::string comp = (*list.front())["args"]["component"];
    if (comp.rfind("agent.", 0) == 0) {
      EXPECT_EQ(process[key.first], "agents");
      agents.insert(thread[key]);
    }
    const auto pos = comp.find(".pe");
    if (comp.rfind("group0.cube", 0) == 0 && pos != std::string::npos) {
      EXPECT_EQ(process[key.first], "group0 / cube" + comp.substr(11, pos - 11)) << comp;
    }
  }
  EXPECT_EQ(agents.size(), run.plan.jobs[0].agents.size());

  // Slices on one track nest or are disjoint; every span lies inside a phase slice.
  const double eps = 1e-9;
  std::map<std::string, double> span_total;
  for (auto& [key, list] : slices) {
    std::sort(list.begin(), list.end(), [](const Json* a, const Json* b) {
      const double ta = (*a)["ts"], tb = (*b)["ts"];
      if (ta != tb) return ta < tb;
      return (*a)["dur"].get<double>() > (*b)["dur"].get<double>();
    });
    std::vector<std::pair<double, const Json*>> stack;  // (end, slice)
    for (const Json* e : list) {
      const double ts = (*e)["ts"], end = ts + (*e)["dur"].get<double>();
      while (!stack.empty() && stack.back().first <= ts + eps && !(end <= stack.back().first + eps)) stack.pop_back();
      if (!stack.empty()) {
        EXPECT_LE(end, stack.back().first + eps) << "overlap without nesting: " << e->dump();
      }
      if ((*e)["cat"] == "phase") {
        EXPECT_TRUE(stack.empty()) << "phase slices are outermost";
      } else {
        ASSERT_FALSE(stack.empty()) << "span outside any phase slice: " << e->dump();
        EXPECT_EQ((*stack.front().second)["name"], (*e)["args"]["phase"]);
        span_total[(*e)["args"]["component"]] += (*e)["args"]["end_ns"].get<double>() - (*e)["args"]["start_ns"].get<double>();
      }
      stack.emplace_back(end, e);
    }
  }
  // Span totals per component = busy times in summary.json.
  const Json busy = run.summary.busy_ns_by_component;
  ASSERT_FALSE(busy.empty());
  for (const auto& [comp, acts] : busy.items()) {
    ASSERT_TRUE(span_total.count(comp)) << comp;
    EXPECT_NEAR(span_total[comp], sum_busy(acts), 1e-6 * std::max(1.0, sum_busy(acts))) << comp;
  }
  for (const auto& [comp, t] : span_total)
    if (comp.rfind("agent.", 0) != 0 && comp.rfind("runtime.", 0) != 0) {
      EXPECT_TRUE(busy.contains(comp)) << comp;
    }
}

TEST(Outputs, SummaryLatencyMatchesAgentLatencies) {
  ScratchDir s("latency");
  const RunOutput run = test::default_run(s.path("run"));
  const Json lat = report::to_json(run.summary.latency);
  const std::string phase = run.plan.jobs[0].phase;
  for (const auto& [name, a] : run.summary.agents) {
    const Json& d = lat["agents"][name];
    EXPECT_DOUBLE_EQ(d["p50_ns"].get<double>(), a.latency_ns.value());
    EXPECT_DOUBLE_EQ(d["by_phase_ns"][phase].get<double>(), a.latency_ns.value());
  }
  const Json& pl = lat["phases"][phase]["agent_latency"];
  EXPECT_LE(pl["p50_ns"].get<double>(), pl["p90_ns"].get<double>());
  EXPECT_LE(pl["p90_ns"].get<double>(), pl["p99_ns"].get<double>());
  EXPECT_LE(pl["p99_ns"].get<double>(), run.summary.total_ns);
  for (const char* cls : {"Q multicast", "local GEMM", "softmax", "reduction"})
    EXPECT_GT(lat["phases"][phase]["span_ns_by_class"][cls]["count"].get<int>(), 0) << cls;
}

TEST(Outputs, StatsJsonCountersAgreeWithSummaryAndClosedForms) {
  ScratchDir s("stats");
  const RunOutput run = test::default_run(s.path("run"));
  const Json st = Json::parse(read_file(s.path("run/stats.json")));
  const double total = run.summary.total_ns;
  EXPECT_DOUBLE_EQ(st["total_ns"].get<double>(), total);
  for (const auto& [comp, by_activity] : run.summary.busy_ns_by_component) {
    const Json acts = by_activity;
    const Json& c = st["components"][comp];
    EXPECT_NEAR(c["busy_ns"].get<double>(), sum_busy(acts), 1e-6 * sum_busy(acts)) << comp;
    EXPECT_EQ(c["busy_cycles"].get<uint64_t>(), uint64_t(std::llround(c["busy_ns"].get<double>())));  // 1 GHz
    EXPECT_GE(c["utilisation"].get<double>(), 0.0);
    EXPECT_LE(c["utilisation"].get<double>(), 1.0 + 1e-12);
    EXPECT_LE(c["occupied_ns"].get<double>(), c["busy_ns"].get<double>() + 1e-6);
  }
  // Policy A's Q tiles (the tile search's 48-row tiles here): every Q buffer holds at least the
  // first whole tile and never more than all rows; tiles leave in order, so its high-water mark
  // is the bytes of a run of consecutive whole tiles.
  const AttentionJob& job = run.plan.jobs[0];
  const uint64_t row_bytes = uint64_t(job.head_dim) * 4;
  const uint64_t tile_bytes = uint64_t(job.tiles[0].rows()) * row_bytes;
  ASSERT_GT(job.tiles.size(), 1u) << "the default scenario runs several Q tiles";
  const HwConfig hw;
  for (int c = 0; c < hw.group.cubes; ++c) {
    const Json& q = st["components"]["group0.cube" + std::to_string(c) + ".q_buffer"]["counters"];
    const uint64_t hwm = q["high_water_bytes"].get<uint64_t>();
    EXPECT_GE(hwm, tile_bytes);
    EXPECT_LE(hwm, uint64_t(job.row_count()) * row_bytes);
    bool whole_tiles = false;
    for (size_t i = 0; i < job.tiles.size(); ++i) {
      uint64_t run_bytes = 0;
      for (size_t k = i; k < job.tiles.size(); ++k) whole_tiles |= (run_bytes += uint64_t(job.tiles[k].rows()) * row_bytes) == hwm;
    }
    EXPECT_TRUE(whole_tiles) << hwm << " B is not a run of consecutive tiles' bytes";
    EXPECT_EQ(q["capacity_bytes"].get<uint64_t>(), hw.cube.q_buffer.bytes);
    EXPECT_DOUBLE_EQ(q["high_water_fraction"].get<double>(), double(hwm) / double(hw.cube.q_buffer.bytes));
  }
  // HBM bytes per PE: its shard's K and V, fp32, streamed once per Q tile (Policy A runs every
  // tile on every PE), but for the KV tiles no row of the Q tile sees (pe.dma.masked_tiles =
  // skip): the tiles of private pages of branches the Q tile has no row of.
  const Json& pe = st["components"]["group0.cube1.pe3"]["counters"];
  uint64_t streamed = 0, skipped_tiles = 0;
  for (const QTile& t : job.tiles) {
    const auto blocks = pe_kv_blocks(job, 11, t, hw.pe.dma.kv_tile_tokens, true);
    for (const KvBlock& b : blocks) streamed += uint64_t(b.n);
    skipped_tiles += ceil_div(uint64_t(job.shards[11].tokens), uint64_t(hw.pe.dma.kv_tile_tokens)) - blocks.size();
  }
  EXPECT_EQ(pe["hbm_bytes_read"].get<uint64_t>(), 2 * streamed * row_bytes);
  EXPECT_EQ(pe["kv_tiles_skipped"].get<uint64_t>(), skipped_tiles);
  EXPECT_LE(streamed, uint64_t(job.tiles.size()) * uint64_t(job.shards[11].tokens));
  // Every counter of the chip's tree is documented, under its path there, and nothing else is.
  std::set<std::string> paths;
  counter_paths(st["chip"], "", paths);
  const Json& docs = st["counter_docs"];
  EXPECT_EQ(docs.size(), paths.size());
  for (const std::string& p : paths) {
    ASSERT_TRUE(docs.contains(p)) << p << " has no counter_docs entry";
    EXPECT_FALSE(docs[p]["description"].get<std::string>().empty()) << p;
  }
  EXPECT_EQ(docs["groups[].cubes[].pes[].hbm_bytes_read"],
            (Json{{"unit", "bytes"}, {"description", "bytes read from the HBM slice"}, {"merge", "sum"}}));
}

TEST(Outputs, ProgressCountsTheRunsSteps) {
  // decode_heavy: prefill, fan-out and 120 decode steps, timing only.
  const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/decode_heavy.json");
  RunOptions opt;
  opt.values = false;
  opt.vcd = false;
  std::vector<SimProgress> seen;
  opt.progress = [&seen](const SimProgress& p) { seen.push_back(p); };
  const RunOutput run = execute(sc, HwConfig{}, opt);
  const int steps = int(run.summary.steps.size());
  ASSERT_GT(steps, 100);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().step, 1);
  EXPECT_EQ(seen.back().step, steps);
  EXPECT_TRUE(seen.back().done);
  std::vector<bool> reported(size_t(steps) + 1, false);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].steps, steps);  // planned before the run = run
    if (i > 0) {
      EXPECT_GE(seen[i].step, seen[i - 1].step);
    }
    reported[size_t(seen[i].step)] = true;
  }
  for (int s = 1; s <= steps; ++s) EXPECT_TRUE(reported[size_t(s)]) << "step " << s << " never reported";
  EXPECT_EQ(seen.back().step_label, run.summary.steps.back().label);
  // The simulated time is the run's so far, within the reported step (not the step's own time,
  // which restarts at 0: the progress line of a short decode step read "0.0 us simulated").
  for (const SimProgress& p : seen) {
    const auto& st = run.summary.steps[size_t(p.step - 1)];
    EXPECT_GE(p.sim_ns, st.start_ns - 1e-6) << "step " << p.step;
    EXPECT_LE(p.sim_ns, st.start_ns + st.ns + 1e-6) << "step " << p.step;
  }
}

TEST(Outputs, ProgressIsMonotoneAndDoesNotChangeResults) {
  const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json");
  RunOptions plain;
  const RunOutput a = execute(sc, HwConfig{}, plain);
  std::vector<SimProgress> seen;
  RunOptions with = plain;
  with.progress = [&seen](const SimProgress& p) { seen.push_back(p); };
  const RunOutput b = execute(sc, HwConfig{}, with);
  ASSERT_GE(seen.size(), 3u);
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].fraction, seen[i - 1].fraction);
    EXPECT_GE(seen[i].sim_ns, seen[i - 1].sim_ns);
  }
  EXPECT_EQ(seen.front().fraction, 0.0);
  EXPECT_EQ(seen.front().phase, a.plan.jobs[0].phase);
  EXPECT_TRUE(seen.back().done);
  EXPECT_DOUBLE_EQ(seen.back().fraction, 1.0);
  EXPECT_GE(seen.back().sim_ns, a.sim.end_ns);
  std::ostringstream va, vb;
  a.sim.trace->write_vcd(va);
  b.sim.trace->write_vcd(vb);
  EXPECT_EQ(va.str(), vb.str());
  EXPECT_EQ(a.sim.tile_done_ns, b.sim.tile_done_ns);
  EXPECT_EQ(to_json(a.summary).dump(), to_json(b.summary).dump());
}
