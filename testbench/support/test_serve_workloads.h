#pragma once
// Serve workloads shared by the serving tests (test_serve.cpp, test_data_parallel.cpp): the
// workload body without its "name" and "scenario", which each test adds.

namespace ahbm::test {

// 10 workflows at 200,000/s: agentic ones (2 rounds of 3 branches with tool calls, a join, an
// answer) twice as often as chats.
inline const char* const kAgenticWorkload = R"({
  "seed": 11,
  "arrival": {"process": "poisson", "rate_per_s": 2e5, "count": 10},
  "templates": [
    {"name": "agent", "weight": 2, "prompt_tokens": 200, "cached_tokens": 40, "rounds": 2,
     "fanout": {"branches": 3, "new_tokens": {"uniform": [8, 24]}, "decode_tokens": {"uniform": [1, 5]}, "tool_ns": 3000},
     "join": {"tokens": 12}, "answer_tokens": 3},
    {"name": "chat", "weight": 1, "prompt_tokens": 100, "answer_tokens": {"uniform": [2, 6]}}
  ]
})";

}  // namespace ahbm::test
