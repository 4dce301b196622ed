// `ahbm-sim run --trace LEVEL [--trace-gz]` (docs/outputs.md, "Output levels"): which files each
// level writes and how big they are, summary.json and stats.json the same at every level, the
// tile level what the default writes for a small run, trace.json.gz readable by gzip, and a bad
// level refused with exit 2 before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "hw/common/base/json_reader.h"
#include "test_support.h"

using namespace ahbm;

namespace {

size_t lines(const std::string& text) { return size_t(std::count(text.begin(), text.end(), '\n')); }

// The third field of a latency.csv row: the component.
std::string component_of(const std::string& row) {
  const size_t a = row.find(',', row.find(',') + 1) + 1;
  return row.substr(a, row.find(',', a) - a);
}

}  // namespace

TEST(OutputLevels, EachLevelWritesWhatItPromisesAndNothingElseChanges) {
  const std::string dir = test::temp_dir("levels");
  const std::string sc = "'" + test::source_path("traces/decode_heavy.json") + "'";
  std::map<std::string, std::string> out;
  for (const char* level : {"default", "tile", "step", "phase", "summary"}) {
    out[level] = dir + "/" + level;
    const std::string opt = std::string(level) == "default" ? "" : std::string(" --trace ") + level;
    const test::CliResult r = test::run_cli("run " + sc + " --out '" + out[level] + "' --no-values --no-vcd" + opt);
    ASSERT_EQ(r.exit_code, 0) << level << ": " << r.output;
  }
  const auto file = [&](const char* level, const char* name) { return test::read_file(out[level] + "/" + name); };
  const auto exists = [&](const char* level, const char* name) {
    return std::filesystem::exists(out[level] + "/" + name);
  };
  // A run within 250,000 spans: the default is the tile level, byte for byte.
  for (const char* f : {"summary.json", "stats.json", "latency.csv", "trace.json"})
    EXPECT_EQ(file("default", f), file("tile", f)) << f;
  // Every level: the same summary and statistics (computed from every span).
  for (const char* level : {"step", "phase", "summary"})
    for (const char* f : {"summary.json", "stats.json"}) EXPECT_EQ(file(level, f), file("tile", f)) << level << " " << f;
  EXPECT_FALSE(exists("summary", "latency.csv"));
  EXPECT_FALSE(exists("summary", "trace.json"));

  // Step: per-tile spans folded, one per PE (or PE DMA), step and phase; the rest kept.
  const size_t tile_rows = lines(file("tile", "latency.csv")), step_rows = lines(file("step", "latency.csv")),
               phase_rows = lines(file("phase", "latency.csv"));
  const size_t steps = Json::parse(file("tile", "summary.json"))["steps"].size();
  ASSERT_GT(steps, 1u);
  // decode_heavy: 122 short steps of a few KV tiles each, so folding saves ~4x here (far more on
  // long steps: ~120x on the LLaMA-8B-sized benchmark).
  EXPECT_LT(step_rows * 3, tile_rows) << "the step level should be a fraction of the tile level";
  size_t pe_spans = 0, annotations = 0;
  for (const std::string& level : {std::string("step"), std::string("phase")}) {
    std::istringstream csv(file(level.c_str(), "latency.csv"));
    std::string row;
    std::getline(csv, row);  // header
    while (std::getline(csv, row)) {
      const std::string comp = component_of(row);
      const bool pe = comp.find(".pe") != std::string::npos;
      const bool annotation = comp.rfind("agent.", 0) == 0 || comp.rfind("runtime.", 0) == 0;
      if (level == "step") pe_spans += pe;
      else EXPECT_TRUE(annotation) << row;
      annotations += level == "phase" && annotation;
    }
  }
  // At most one folded span per PE and PE DMA (32 + 32 on the default chip) per step.
  EXPECT_LE(pe_spans, steps * 64);
  EXPECT_GT(pe_spans, 0u);
  EXPECT_EQ(annotations, phase_rows - 1);
  // trace.json follows latency.csv: smaller at each coarser level, and still a valid document.
  EXPECT_LT(file("step", "trace.json").size(), file("tile", "trace.json").size() / 3);
  EXPECT_LT(file("phase", "trace.json").size(), file("step", "trace.json").size());
  for (const char* level : {"step", "phase"})
    EXPECT_FALSE(Json::parse(file(level, "trace.json"))["traceEvents"].empty()) << level;
  std::filesystem::remove_all(dir);
}

TEST(OutputLevels, GzipTraceIsTheSameTraceCompressed) {
  const std::string dir = test::temp_dir("levels-gz");
  const std::string sc = "'" + test::source_path("traces/fanout_8x20.json") + "'";
  ASSERT_EQ(test::run_cli("run " + sc + " --out '" + dir + "/plain' --no-values --no-vcd").exit_code, 0);
  const test::CliResult r = test::run_cli("run " + sc + " --out '" + dir + "/gz' --no-values --no-vcd --trace-gz");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/gz/trace.json"));
  ASSERT_TRUE(std::filesystem::exists(dir + "/gz/trace.json.gz"));
  const std::string plain = test::read_file(dir + "/plain/trace.json");
  EXPECT_LT(std::filesystem::file_size(dir + "/gz/trace.json.gz") * 4, plain.size());
  // gzip(1) reads it back to the uncompressed trace.
  const test::CliResult z = test::run_shell("gzip -dc '" + dir + "/gz/trace.json.gz' 2>&1");
  ASSERT_EQ(z.exit_code, 0) << z.output.substr(0, 200);
  EXPECT_EQ(z.output, plain);
  EXPECT_EQ(test::read_file(dir + "/gz/latency.csv"), test::read_file(dir + "/plain/latency.csv"));
  std::filesystem::remove_all(dir);
}

TEST(OutputLevels, AnUnknownLevelIsRefusedBeforeAnythingIsWritten) {
  const std::string dir = test::temp_dir("levels-bad");
  const test::CliResult r = test::run_cli("run '" + test::source_path("traces/fanout_8x20.json") + "' --out '" + dir +
                                          "/run' --trace tiles");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--trace: \"tiles\" is not an output level (allowed: auto, summary, phase, step, tile)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/run"));
  std::filesystem::remove_all(dir);
}
