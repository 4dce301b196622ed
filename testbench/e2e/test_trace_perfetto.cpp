// trace.json as Perfetto imports it: every trace of traces/ (timing only), ts and dur converted to
// integer ns each on its own (Perfetto's JSON importer, runtime/report/trace_time.h: an integer
// token is µs x 1000, a number with a fraction llround(value x 1000)), slices of one track
// replayed in timestamp order the way its slice tracker nests them. A slice that starts inside an
// open one but ends after it is dropped there; none may be. The same text read as exact decimals
// (test_trace_exact.h) gives whole ns, named tracks and no partial overlap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "test_trace_exact.h"

using namespace ahbm;

namespace {

struct PerfettoImport {
  size_t slices = 0, dropped = 0;
  int64_t last_end_ns = 0;
};

PerfettoImport import_like_perfetto(const nlohmann::json& events) {
  struct Slice {
    int64_t ts, end;
    size_t order;  // file order breaks timestamp ties (Perfetto's sorter is stable)
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Slice>> tracks;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (e["ph"] != "X") continue;
    const auto ns = [](const nlohmann::json& v) {
      return v.is_number_integer() ? v.get<int64_t>() * 1000 : std::llround(v.get<double>() * 1000.0);
    };
    const int64_t ts = ns(e["ts"]), dur = ns(e["dur"]);
    tracks[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].push_back({ts, ts + dur, i});
  }
  PerfettoImport r;
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end(),
              [](const Slice& a, const Slice& b) { return std::tie(a.ts, a.order) < std::tie(b.ts, b.order); });
    std::vector<int64_t> open;  // ends of the enclosing slices
    for (const Slice& s : slices) {
      ++r.slices;
      r.last_end_ns = std::max(r.last_end_ns, s.end);
      while (!open.empty() && open.back() <= s.ts) open.pop_back();
      if (!open.empty() && s.end > open.back()) {
        ++r.dropped;
        continue;
      }
      open.push_back(s.end);
    }
  }
  return r;
}

}  // namespace

TEST(TracePerfetto, EveryTraceNestsExactlyAsPerfettoReadsIt) {
  const std::string dir = test::temp_dir("perfetto");
  size_t traces = 0;
  for (const auto& f : std::filesystem::directory_iterator(test::source_path("traces"))) {
    if (f.path().extension() != ".json") continue;
    ++traces;
    const std::string name = f.path().stem().string(), out = dir + "/" + name;
    const test::CliResult r = test::run_cli("run '" + f.path().string() + "' --out '" + out + "' --no-values --no-vcd");
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.output;
    const std::string text = test::read_file(out + "/trace.json");
    const auto trace = nlohmann::json::parse(text);
    const PerfettoImport p = import_like_perfetto(trace["traceEvents"]);
    EXPECT_GT(p.slices, 100u) << name;
    EXPECT_EQ(p.dropped, 0u) << name << ": slices Perfetto would drop as overlapping their parent";
    // The trace ends where the run does, to the nanosecond.
    const auto summary = nlohmann::json::parse(test::read_file(out + "/summary.json"));
    EXPECT_EQ(p.last_end_ns, std::llround(summary["total_ns"].get<double>())) << name;
    const test::TraceExactness t = test::check_trace_exactness(text);
    EXPECT_TRUE(t.not_whole_ns.empty()) << name << ": ts/dur not whole ns:" << test::first_few(t.not_whole_ns);
    EXPECT_TRUE(t.unnamed_tracks.empty()) << name << ": tracks without a name:" << test::first_few(t.unnamed_tracks);
    EXPECT_TRUE(t.partial_overlaps.empty()) << name << ": partial overlaps:" << test::first_few(t.partial_overlaps);
    EXPECT_EQ(t.last_end_ns, p.last_end_ns) << name;
  }
  EXPECT_GE(traces, 6u);
  std::filesystem::remove_all(dir);
}
