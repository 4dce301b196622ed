#pragma once
// Join strategies (AHBM note 5.3, 5.6-5.10): each turns the sub-agents' results into the
// text segments of the main agent's join input, plus the work that has to happen before the
// main agent can prefill it (reducer agents, evidence retrieval). Strategies are plain
// functions registered by name in a JoinStrategyRegistry object (no global table).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hw/common/base/registry.h"
#include "runtime/join/result.h"
#include "runtime/join/shape.h"

namespace ahbm::join {

struct JoinOptions {
  std::string strategy = "schema";
  Tokenizer tokenizer;
  struct Pointer {
    std::string summaries = "dedup";  // the summaries the handles ride on: "dedup" or "schema"
    // Which handles the main agent asks for: an explicit list, or each cited handle with
    // probability `request_probability` (drawn from `seed`). Neither = summaries only.
    std::vector<int64_t> request;
    std::optional<double> request_probability;
    uint64_t seed = 1;
  } pointer;
  struct Hierarchical {
    int reducers = 0;                     // 0: ceil(agents / group_size)
    int group_size = 4;                   // note 5.9: 16 sub-agents -> 4 reducers
    int64_t reducer_output_tokens = 50;   // tokens of each reducer's summary
    std::string reducer_input = "full_text";  // what a reducer reads: "full_text" or "schema"
  } hierarchical;
  struct Latent {
    int64_t tokens_per_branch = 16;  // note 5.10: 1000 text tokens -> 16 latent tokens
  } latent;
};

// One piece of the join input. `text` is empty when only the count is known (sizes-only
// agents, reducer summaries, latent tokens).
struct Segment {
  std::string source;  // agent name(s), "E17", "reducer0"
  std::string kind;    // full_text, text_fallback, schema, dedup, evidence, reducer_summary, latent
  std::string text;
  int64_t tokens = 0;
};

// A reducer agent of the hierarchical join: forked from the shared prefix, it prefills its
// input (the results of its branches) and decodes a summary of `output_tokens` tokens, which
// becomes one segment of the main agent's join input. Reducers are independent and run in
// parallel; their KV is private and released after the join.
struct ReducerTask {
  std::string name;
  std::vector<std::string> branches;
  std::vector<Segment> input;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  PrefillShape prefill;               // over the shared prefix (filled by make_join_plan)
  int64_t decode_kv_read_bytes = 0;   // all output_tokens decode steps (filled by make_join_plan)
  int64_t kv_bytes = 0;               // private KV at the end: (input + output) tokens
};

// One evidence handle the framework resolves (retrieval or tool call) and appends (note 5.8).
struct EvidenceFetch {
  int64_t id = 0;
  int64_t tokens = 0;
  std::vector<std::string> cited_by;  // agents whose valid results cite it
};

// What a strategy produces.
struct JoinBody {
  std::vector<Segment> segments;
  std::vector<ReducerTask> reducers;
  std::vector<EvidenceFetch> fetches;
  std::vector<std::string> warnings;
  bool requires_trained_model = false;
};

using StrategyFn = std::function<JoinBody(const JoinInput&, const JoinOptions&)>;

class JoinStrategyRegistry {
 public:
  // Names are unique; adding one twice is a programming error (std::logic_error).
  void add(const std::string& name, const std::string& description, StrategyFn fn) {
    entries_.add(Entry{name, description, std::move(fn)});
  }
  // Unknown name -> InputError listing the known names (and a near one, if any).
  const StrategyFn& get(const std::string& name) const { return entries_.get(name).fn; }
  const std::string& description(const std::string& name) const { return entries_.get(name).description; }
  std::vector<std::string> names() const { return entries_.names(); }  // in registration order

 private:
  struct Entry {
    std::string name, description;
    StrategyFn fn;
    static constexpr const char* kKind = "join strategy";
  };
  Registry<Entry> entries_;
};

// full_text, schema, dedup, pointer, hierarchical, latent (in this order).
JoinStrategyRegistry builtin_join_strategies();

// Reads the "join" block; `strategy` must be a name of `reg`.
JoinOptions read_join_options(JsonReader j, const JoinStrategyRegistry& reg);
// Cross-checks options against the input (requested evidence must exist in the store);
// `join_path` is the field path of the join block in `file`, for the message.
void validate_join(const JoinInput& in, const JoinOptions& opt, const std::string& file,
                   const std::string& join_path = "join");

// Schema serialisation of one finding (note 5.6), shared by the schema and dedup strategies:
//   "<label>: <claim>\n[Supported by N agents\n]Confidence: 0.91\nEvidence: E17, E24"
// The claim is shown with '_' as spaces; the support line appears only when N > 1.
std::string format_finding(const std::string& label, const std::string& claim, int support,
                           double confidence, const std::vector<int64_t>& evidence_ids);
// The key under which dedup merges claims: lower case, runs of ' ', '_' and '-' as one space.
std::string claim_key(const std::string& claim);

}  // namespace ahbm::join
