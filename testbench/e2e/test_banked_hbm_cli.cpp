// `--set pe.hbm.model=banked` as a user runs it: a whole run of the default scenario completes,
// echoes the model in its config, reports the bank counters per PE in stats.json and shows them
// as waveform signals; bad pe.hbm values stop with exit 2 and a line naming the field.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "test_support.h"

using namespace ahbm;
using nlohmann::json;

namespace {

const std::string kScenario = test::source_path("traces/fanout_8x20.json");

}  // namespace

TEST(BankedHbmCli, DefaultScenarioRunsWithTheBankedModel) {
  const std::string dir = test::temp_dir("banked-hbm");
  const test::CliResult r = test::run_cli("run '" + kScenario + "' --out '" + dir + "/run' --set pe.hbm.model=banked");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json summary = json::parse(test::read_file(dir + "/run/summary.json"));
  EXPECT_EQ(summary["config"]["hw"]["pe"]["hbm"]["model"], "banked");
  EXPECT_EQ(summary["config"]["hw"]["pe"]["hbm"]["pseudo_channels"], 12);
  EXPECT_LE(summary["numerics"]["max_abs_err"].get<double>(), 1e-4);
  const json stats = json::parse(test::read_file(dir + "/run/stats.json"));
  const json& pe = stats["components"]["group0.cube0.pe0"]["counters"];
  // Every 32-B DRAM burst the slice moved, read (the KV tiles) or written (the step's new tokens,
  // pe.dma.kv_writes), is a row hit or a row miss.
  EXPECT_EQ(pe["hbm_row_hits"].get<uint64_t>() + pe["hbm_row_misses"].get<uint64_t>(),
            (pe["hbm_bytes_read"].get<uint64_t>() + pe["hbm_bytes_written"].get<uint64_t>()) / 32);
  EXPECT_GT(pe["hbm_row_hits"].get<uint64_t>(), 0u);
  const std::string vcd = test::read_file(dir + "/run/waves.vcd");
  EXPECT_NE(vcd.find(" row_hits [31:0] $end"), std::string::npos);
  EXPECT_NE(vcd.find(" refreshes [31:0] $end"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(BankedHbmCli, BadHbmModelValuesAreRefusedNamingTheField) {
  const std::string dir = test::temp_dir("banked-hbm-bad");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"pe.hbm.model=dram", "pe.hbm.model"},
      {"pe.hbm.pseudo_channels=0", "pe.hbm.pseudo_channels"},
      {"pe.hbm.efficiency=0", "pe.hbm.efficiency"},
      {"pe.hbm.efficiency=1.5", "pe.hbm.efficiency"},
      {"pe.hbm.mapping=diagonal", "pe.hbm.mapping"},
      {"pe.hbm.refresh=never", "pe.hbm.refresh"},
      // 2 x 512 MiB cannot hold the default 2 GiB slice.
      {"pe.hbm.model=banked --set pe.hbm.pseudo_channels=2", "pe.hbm.capacity_bytes"},
  };
  for (const auto& [set, field] : bad) {
    const test::CliResult r = test::run_cli("run '" + kScenario + "' --out '" + dir + "/run' --set " + set);
    EXPECT_EQ(r.exit_code, 2) << set << ": " << r.output;
    EXPECT_NE(r.output.find(field), std::string::npos) << set << ": " << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir + "/run")) << set;
  }
  std::filesystem::remove_all(dir);
}
