// The serving workload format (runtime/serve/workload.h): validation names field, value and
// range; the Azure trace CSV importer; expand() draws the same workflows from the same seed.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "hw/common/base/error.h"
#include "runtime/serve/workload.h"
#include "test_support.h"

namespace ahbm {
namespace {

Json base() {
  return Json::parse(R"({"name": "w", "arrival": {"process": "poisson", "rate_per_s": 1000, "count": 50},
    "templates": [{"name": "a", "weight": 3, "prompt_tokens": 128, "rounds": 2,
                   "fanout": {"branches": 4, "new_tokens": 8, "decode_tokens": {"uniform": [2, 9]}}},
                  {"name": "b", "weight": 1, "prompt_tokens": 32, "answer_tokens": 5}]})");
}

serve::Workload parse(Json j) {
  j["scenario"] = test::source_path("traces/serve/small_attn.json");
  return serve::parse_workload(j, "w.json");
}

std::string error_of(Json j) {
  try {
    parse(std::move(j));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ServeWorkload, BadFieldsNameFieldValueAndRange) {
  Json j = base();
  j["templates"][0]["fanout"]["decode_tokens"] = Json::parse(R"({"uniform": [9, 2]})");
  EXPECT_NE(error_of(j).find("templates[0].fanout.decode_tokens.uniform"), std::string::npos) << error_of(j);
  j = base();
  j["arrival"]["rate_per_s"] = -1;
  EXPECT_NE(error_of(j).find("arrival.rate_per_s"), std::string::npos) << error_of(j);
  j = base();
  j["templates"][1]["fanout"] = Json::parse(R"({"branches": 2})");
  EXPECT_NE(error_of(j).find("needs rounds >= 1"), std::string::npos) << error_of(j);
  j = base();
  j["templates"][0]["join"] = Json::parse(R"({"strategy": "first", "first": 5})");
  EXPECT_NE(error_of(j).find("templates[0].join.first"), std::string::npos) << error_of(j);
  j = base();
  j["arrival"] = Json::parse(R"({"process": "timestamps", "times_ns": [5, 3]})");
  EXPECT_NE(error_of(j).find("element 1"), std::string::npos) << error_of(j);
  j = base();
  j["templates"][0]["cached_tokens"] = 200;
  EXPECT_NE(error_of(j).find("exceeds prompt_tokens"), std::string::npos) << error_of(j);
  j = base();
  j["templatez"] = 1;
  EXPECT_NE(error_of(j).find("templatez"), std::string::npos) << error_of(j);
  j = base();
  j["scheduler"] = Json::parse(R"({"attention_policy": "B9"})");
  EXPECT_NE(error_of(j).find("scheduler.attention_policy"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(j).find("B9"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(j).find("A, B1, B2, B3, B4, B5, auto"), std::string::npos) << error_of(j);
  j = base();
  j["scheduler"] = Json::parse(R"({"launch": "per_head"})");
  EXPECT_NE(error_of(j).find("scheduler.launch"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(j).find("unified, per-head"), std::string::npos) << error_of(j);
  j = base();
  j["scheduler"] = Json::parse(R"({"attention_policy": "auto", "launch": "per-head"})");
  const serve::Workload w = parse(j);
  EXPECT_EQ(w.scheduler.attention_policy, "auto");
  EXPECT_EQ(w.scheduler.launch, "per-head");
  EXPECT_EQ(parse(base()).scheduler.attention_policy, "A");  // the default: policy A, one launch
  EXPECT_EQ(parse(base()).scheduler.launch, "unified");
}

TEST(ServeWorkload, AdmissionAndPreemptionAreCheckedTogether) {
  Json j = base();
  EXPECT_EQ(parse(j).scheduler.admission, "reserve");
  j["scheduler"] = Json::parse(R"({"admission": "on_demand"})");
  EXPECT_EQ(parse(j).scheduler.preemption, "recompute");
  j["scheduler"] = Json::parse(R"({"admission": "on_demand", "preemption": "swap"})");
  EXPECT_EQ(parse(j).scheduler.preemption, "swap");
  // An unknown value names the field, the value and the allowed values.
  j["scheduler"] = Json::parse(R"({"admission": "lazy"})");
  for (const char* part : {"scheduler.admission", "lazy", "reserve", "on_demand"})
    EXPECT_NE(error_of(j).find(part), std::string::npos) << error_of(j);
  j["scheduler"] = Json::parse(R"({"admission": "on_demand", "preemption": "drop"})");
  for (const char* part : {"scheduler.preemption", "drop", "recompute", "swap"})
    EXPECT_NE(error_of(j).find(part), std::string::npos) << error_of(j);
  // A preemption mode without on_demand admission would never act: refused, not ignored.
  j["scheduler"] = Json::parse(R"({"preemption": "swap"})");
  EXPECT_NE(error_of(j).find("scheduler.preemption"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(j).find("on_demand"), std::string::npos) << error_of(j);
  // With P-B-D's pools it is allowed (the pulls and the pools' steps); not with the no-sharing baseline.
  j["scheduler"] = Json::parse(R"({"admission": "on_demand", "pbd": {}})");
  EXPECT_TRUE(parse(j).scheduler.on_demand());
  EXPECT_TRUE(parse(j).scheduler.pbd.has_value());
  j["scheduler"] = Json::parse(R"({"admission": "on_demand", "share_prefix": false})");
  EXPECT_NE(error_of(j).find("share_prefix"), std::string::npos) << error_of(j);
  // The echo holds the fields only when on_demand is set (a reserve run's summary is unchanged).
  EXPECT_FALSE(serve::to_json(parse(base()))["scheduler"].contains("admission"));
  j["scheduler"] = Json::parse(R"({"admission": "on_demand", "preemption": "swap"})");
  EXPECT_EQ(serve::to_json(parse(j))["scheduler"]["preemption"], "swap");
}

TEST(ServeWorkload, PlacementIsSpreadOrPrefixAffinity) {
  Json j = base();
  EXPECT_EQ(parse(j).scheduler.placement, "spread");
  j["scheduler"] = Json::parse(R"({"placement": "prefix_affinity"})");
  EXPECT_EQ(parse(j).scheduler.placement, "prefix_affinity");
  EXPECT_EQ(serve::to_json(parse(j))["scheduler"]["placement"], "prefix_affinity");
  EXPECT_FALSE(serve::to_json(parse(base()))["scheduler"].contains("placement"));  // spread: echo as before
  j["scheduler"] = Json::parse(R"({"placement": "packed"})");
  for (const char* part : {"scheduler.placement", "packed", "spread, prefix_affinity"})
    EXPECT_NE(error_of(j).find(part), std::string::npos) << error_of(j);
  // P-B-D's pools are not cut into slices: refused, not ignored.
  j["scheduler"] = Json::parse(R"({"placement": "prefix_affinity", "pbd": {}})");
  EXPECT_NE(error_of(j).find("scheduler.placement"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(j).find("scheduler.pbd"), std::string::npos) << error_of(j);
}

// P-B-D's pools per stage (THInfer's DP_P, DP_D): 1 by default and then not echoed (the echo of
// a one-pool workload is as before); more are echoed; out of range names the field and range.
TEST(ServeWorkload, PbdPoolCountsAreCheckedAndEchoed) {
  Json j = base();
  j["scheduler"] = Json::parse(R"({"pbd": {}})");
  const serve::Workload one = parse(j);
  EXPECT_EQ(one.scheduler.pbd->prefill_pools, 1);
  EXPECT_EQ(one.scheduler.pbd->decode_pools, 1);
  EXPECT_FALSE(serve::to_json(one)["scheduler"]["pbd"].contains("prefill_pools"));
  EXPECT_FALSE(serve::to_json(one)["scheduler"]["pbd"].contains("decode_pools"));
  j["scheduler"] = Json::parse(R"({"pbd": {"prefill_pools": 2, "decode_pools": 3}})");
  EXPECT_EQ(serve::to_json(parse(j))["scheduler"]["pbd"]["prefill_pools"], 2);
  EXPECT_EQ(serve::to_json(parse(j))["scheduler"]["pbd"]["decode_pools"], 3);
  for (const char* field : {"prefill_pools", "decode_pools"}) {
    j["scheduler"] = Json::parse(R"({"pbd": {}})");
    j["scheduler"]["pbd"][field] = 0;
    const std::string e = error_of(j);
    EXPECT_NE(e.find(std::string("scheduler.pbd.") + field), std::string::npos) << e;
    EXPECT_NE(e.find("[1, 1023]"), std::string::npos) << e;
  }
}

TEST(ServeWorkload, ExpandDrawsTheMixAndCountsFromTheSeed) {
  const serve::Workload w = parse(base());
  const auto a = serve::expand(w), b = serve::expand(w);
  ASSERT_EQ(a.size(), 50u);
  int first = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival_ns, b[i].arrival_ns);
    EXPECT_EQ(a[i].tmpl, b[i].tmpl);
    if (i > 0) {
      EXPECT_GE(a[i].arrival_ns, a[i - 1].arrival_ns);
    }
    first += a[i].tmpl == 0;
    for (const auto& r : a[i].rounds)
      for (const auto& br : r) {
        EXPECT_GE(br.decode_tokens, 2);
        EXPECT_LE(br.decode_tokens, 9);
      }
  }
  // 3:1 mix over 50 draws: the first template's share within 4 standard deviations of 0.75.
  EXPECT_NEAR(first / 50.0, 0.75, 4 * std::sqrt(0.75 * 0.25 / 50));
  // Mean gap of 1 ms at 1000/s within 4 standard errors (exponential: sd = mean).
  const double mean_gap = a.back().arrival_ns / 49.0;
  EXPECT_NEAR(mean_gap, 1e6, 4 * 1e6 / std::sqrt(49.0));
}

TEST(ServeWorkload, AzureCsvRowsBecomePlainRequests) {
  const std::string dir = test::temp_dir("azure");
  const std::string csv = test::write_temp(dir, "t.csv",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:15:46.5000000,100,7\n"
                                           "2023-11-16 18:15:47.2500000,300,2\n");
  const auto rows = serve::read_azure_csv(csv, 10);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].arrival_ns, 0);
  EXPECT_NEAR(rows[1].arrival_ns, 0.75e9, 1);
  EXPECT_EQ(rows[1].context_tokens, 300);
  EXPECT_EQ(rows[0].generated_tokens, 7);
  const std::string bad = test::write_temp(dir, "bad.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0.5,100,x\n");
  try {
    serve::read_azure_csv(bad, 10);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2: GeneratedTokens \"x\""), std::string::npos) << e.what();
  }
  Json j = Json::parse(R"({"name": "az", "arrival": {"process": "azure_csv", "file": "t.csv"}})");
  j["arrival"]["file"] = csv;
  const auto specs = serve::expand(parse(j));
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[1].prompt_tokens, 300);
  EXPECT_EQ(specs[1].answer_tokens, 2);
  EXPECT_TRUE(specs[1].rounds.empty());
}

// Issue 42 item 6: dates on the real calendar (every month was 31 days long).
TEST(ServeWorkload, AzureCsvDatesFollowTheCalendar) {
  EXPECT_EQ(serve::days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(serve::days_from_civil(2000, 3, 1), 11017);
  EXPECT_EQ(serve::days_from_civil(1969, 12, 31), -1);
  EXPECT_EQ(serve::days_from_civil(2023, 12, 1) - serve::days_from_civil(2023, 11, 30), 1);
  EXPECT_EQ(serve::days_in_month(2023, 2), 28);
  EXPECT_EQ(serve::days_in_month(2024, 2), 29);
  EXPECT_EQ(serve::days_in_month(1900, 2), 28);
  EXPECT_EQ(serve::days_in_month(2000, 2), 29);
  const auto gaps = [](const std::string& a, const std::string& b) {
    std::istringstream in("TIMESTAMP,ContextTokens,GeneratedTokens\n" + a + ",10,1\n" + b + ",10,1\n");
    return serve::parse_azure_csv(in, "t.csv", 10).back().arrival_ns / 1e9;
  };
  EXPECT_DOUBLE_EQ(gaps("2023-11-30 23:59:59", "2023-12-01 00:00:00"), 1.0);       // was 86,401 s
  EXPECT_DOUBLE_EQ(gaps("2023-02-28 00:00:00", "2023-03-01 00:00:00"), 86400.0);   // was 4 days
  EXPECT_DOUBLE_EQ(gaps("2024-02-28 00:00:00", "2024-03-01 00:00:00"), 172800.0);  // leap year
  EXPECT_DOUBLE_EQ(gaps("2023-12-31 23:00:00", "2024-01-01 01:00:00"), 7200.0);
}

// Issue 42 item 22: a byte-order mark before the header (spreadsheet programs write one) is skipped.
TEST(ServeWorkload, AzureCsvByteOrderMarkIsSkipped) {
  std::istringstream in("\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\n0,10,1\n2.5,20,2\n");
  const auto rows = serve::parse_azure_csv(in, "t.csv", 10);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[1].arrival_ns, 2.5e9);
  EXPECT_EQ(rows[1].context_tokens, 20);
}

}  // namespace
}  // namespace ahbm
