// The serving workload format (runtime/serve/workload.h): validation names field, value and
// range; the Azure trace CSV importer; expand() draws the same workflows from the same seed.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "hw/common/base/error.h"
#include "runtime/serve/request_csv.h"
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

// Issue 44 item 3 (a): a Vidur / Splitwise style request trace: named columns in any order (others
// ignored), seconds or ns, sessions as workflows of rounds, agents as a round's branches.
std::vector<serve::RequestRow> request_rows(const std::string& text) {
  std::istringstream in(text);
  return serve::parse_request_csv(in, "r.csv", 100);
}

std::string request_error(const std::string& text) {
  try {
    serve::request_workflows(request_rows(text), "r.csv", 0, 1);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ServeWorkload, RequestCsvReadsVidurAndSplitwiseColumns) {
  // Vidur: arrived_at in seconds; extra columns ignored.
  auto rows = request_rows("request_id,arrived_at,num_prefill_tokens,num_decode_tokens\n0,1.5,100,7\n1,1.75,300,2\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].arrival_ns, 0);
  EXPECT_DOUBLE_EQ(rows[1].arrival_ns, 0.25e9);
  EXPECT_EQ(rows[1].prompt_tokens, 300);
  EXPECT_EQ(rows[0].output_tokens, 7);
  EXPECT_EQ(rows[1].line, 3);
  // Splitwise: its seven columns, arrival_timestamp in seconds.
  rows = request_rows("request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n"
                      "0,2,0,0.0,1,1020,45\n1,2,0,0.002,1,64,3\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[1].arrival_ns, 2e6);
  EXPECT_EQ(rows[0].prompt_tokens, 1020);
  EXPECT_EQ(rows[1].output_tokens, 3);
  // ns, columns in another order, a byte-order mark.
  rows = request_rows("\xEF\xBB\xBFoutput_tokens,prompt_tokens,arrival_ns\n4,10,1000\n5,20,1250\n");
  EXPECT_DOUBLE_EQ(rows[1].arrival_ns, 250);
  EXPECT_EQ(rows[1].prompt_tokens, 20);
  EXPECT_EQ(rows[1].output_tokens, 5);
}

TEST(ServeWorkload, RequestCsvBadInputNamesFileLineColumnAndRange) {
  const auto err = [](const std::string& text) {
    try {
      request_rows(text);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string h = "arrived_at,num_prefill_tokens,num_decode_tokens\n";
  EXPECT_NE(err(h + "0,100,0\n").find("r.csv: line 2: num_decode_tokens \"0\" must be an integer in [1, 1048576]"),
            std::string::npos) << err(h + "0,100,0\n");
  EXPECT_NE(err(h + "0,100,1\n0,2000000,1\n").find("line 3: num_prefill_tokens \"2000000\""), std::string::npos);
  EXPECT_NE(err(h + "-1,100,1\n").find("line 2: arrived_at \"-1\" must be a number >= 0 (seconds)"), std::string::npos);
  EXPECT_NE(err(h + "1,100,1\n0.5,100,1\n").find("line 3: arrived_at \"0.5\" is earlier than the row before"),
            std::string::npos);
  EXPECT_NE(err(h + "0,100\n").find("line 2: expected 3 columns (as the header), got 2"), std::string::npos);
  EXPECT_NE(err("arrived_at,num_decode_tokens\n0,1\n").find("line 1: no prompt tokens column (expected one of "
                                                             "num_prefill_tokens | prompt_size | prompt_tokens"),
            std::string::npos);
  EXPECT_NE(err("arrived_at,arrival_ns,prompt_size,token_size\n").find("both give the arrival time"), std::string::npos);
  EXPECT_NE(err("arrived_at,prompt_size,token_size,agent_id\n").find("agent_id needs a session_id column"),
            std::string::npos);
  EXPECT_NE(err(h).find("no request rows after the header"), std::string::npos);
  EXPECT_NE(err("").find("file is empty"), std::string::npos);
}

TEST(ServeWorkload, RequestCsvSessionsBecomeRoundsAndAgentsBranches) {
  const auto specs = serve::request_workflows(
      request_rows("arrived_at,num_prefill_tokens,num_decode_tokens,session_id,agent_id\n"
                   "0,100,7,,\n"          // w0: plain
                   "1,200,5,s,\n"         // w1: the session's root
                   "2,30,3,s,a\n"         // round 0, branch a
                   "2,40,4,s,b\n"         // round 0, branch b
                   "3,50,6,t,\n"          // w2: alone in its session: plain
                   "4,31,2,s,a\n"         // a again: round 1
                   "4,41,1,s,b\n"),
      "r.csv", 0, 1);
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].tmpl, 0);
  EXPECT_TRUE(specs[0].rounds.empty());
  EXPECT_EQ(specs[0].answer_tokens, 7);
  EXPECT_EQ(specs[1].tmpl, 1);
  EXPECT_DOUBLE_EQ(specs[1].arrival_ns, 1e9);
  EXPECT_EQ(specs[1].prompt_tokens, 200);
  EXPECT_EQ(specs[1].answer_tokens, 5);
  ASSERT_EQ(specs[1].rounds.size(), 2u);
  ASSERT_EQ(specs[1].rounds[0].size(), 2u);
  EXPECT_EQ(specs[1].rounds[0][1].new_tokens, 40);
  EXPECT_EQ(specs[1].rounds[1][0].decode_tokens, 2);
  EXPECT_EQ(specs[1].join_first, 2);
  EXPECT_EQ(specs[1].join_tokens, 0);
  EXPECT_EQ(specs[2].id, 2);
  EXPECT_EQ(specs[2].tmpl, 0);
  EXPECT_DOUBLE_EQ(specs[2].arrival_ns, 3e9);
  // Without agent ids every later row of a session is a round of its own.
  const auto chat = serve::request_workflows(
      request_rows("arrived_at,prompt_size,token_size,session_id\n0,10,1,c\n1,20,2,c\n2,30,3,c\n"), "r.csv", 0, 1);
  ASSERT_EQ(chat.size(), 1u);
  ASSERT_EQ(chat[0].rounds.size(), 2u);
  EXPECT_EQ(chat[0].rounds[1][0].new_tokens, 30);
  EXPECT_EQ(chat[0].join_first, 1);
  // Rounds of different sizes cannot join on one count: refused, naming the session's first line.
  EXPECT_NE(request_error("arrived_at,prompt_size,token_size,session_id,agent_id\n0,10,1,s,\n1,5,1,s,a\n1,5,1,s,b\n"
                          "2,5,1,s,a\n")
                .find("r.csv: line 2: the session of workflow 0 has rounds of 2 and 1 agents (round 1)"),
            std::string::npos);
  std::string many = "arrived_at,prompt_size,token_size,session_id\n";
  for (int i = 0; i < 66; ++i) many += std::to_string(i) + ",10,1,long\n";
  EXPECT_NE(request_error(many).find("r.csv: line 67: session_id \"long\" has more than 64 rounds"), std::string::npos)
      << request_error(many);
}

TEST(ServeWorkload, RequestCsvWorkloadExpandsItsRows) {
  const std::string dir = test::temp_dir("request-csv");
  const std::string csv = test::write_temp(dir, "t.csv", "arrived_at,num_prefill_tokens,num_decode_tokens,session_id\n"
                                                          "0,100,7,x\n0.5,20,3,x\n0.75,300,2,\n");
  Json j = Json::parse(R"({"name": "rq", "arrival": {"process": "request_csv", "file": "t.csv", "count": 3}})");
  j["arrival"]["file"] = csv;
  const serve::Workload w = parse(j);
  ASSERT_EQ(w.templates.size(), 2u);
  EXPECT_EQ(w.templates[0].name, "request_csv");
  EXPECT_EQ(w.templates[1].name, "request_csv_session");
  EXPECT_TRUE(serve::to_json(w)["templates"].empty());
  const auto specs = serve::expand(w);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].tmpl, 1);
  EXPECT_EQ(specs[0].rounds.size(), 1u);
  EXPECT_EQ(specs[1].tmpl, 0);
  EXPECT_DOUBLE_EQ(specs[1].arrival_ns, 0.75e9);
  // count: rows read at most.
  j["arrival"]["count"] = 1;
  EXPECT_EQ(serve::expand(parse(j)).size(), 1u);
  j["templates"] = Json::parse(R"([{"name": "a", "prompt_tokens": 8}])");
  EXPECT_THROW(parse(j), InputError);
}

}  // namespace
}  // namespace ahbm
