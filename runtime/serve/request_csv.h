#pragma once
// The request-trace importer of the Vidur / Splitwise style (`arrival.process = "request_csv"`,
// docs/serving.md "The workload format"): a CSV whose header names its columns, one request a row.
#include <istream>
#include <string>
#include <vector>

#include "runtime/serve/workload.h"

namespace ahbm::serve {

// One row. Arrivals are ns after the first row's (as the Azure reader's, up to 2^50 ns).
struct RequestRow {
  int line = 0;  // in the file, for messages
  double arrival_ns = 0;
  int prompt_tokens = 0, output_tokens = 0;
  std::string session, agent;  // "" without the column, or for an empty cell
};

// The columns read, by header name (others, as Vidur's request_id or Splitwise's batch_size, are
// ignored); exactly one of each group:
//   arrival: arrived_at (s, Vidur) | arrival_timestamp (s, Splitwise) | arrival_ns (ns)
//   prompt:  num_prefill_tokens (Vidur) | prompt_size (Splitwise) | prompt_tokens
//   output:  num_decode_tokens (Vidur) | token_size (Splitwise) | output_tokens
//   optional: session_id, agent_id (agent_id only with session_id)
// At most `max_rows` rows; bad rows are InputErrors naming the file, line, column, value and range.
std::vector<RequestRow> parse_request_csv(std::istream& in, const std::string& path, int max_rows);
// The file (a regular file; a FIFO or a device is refused before it is opened).
std::vector<RequestRow> read_request_csv(const std::string& path, int max_rows);

// The rows as the run's workflows, in the order of their first rows (ids 0, 1, ...): a row without
// a session (no session_id column, or an empty cell), or the only row of its session, is a plain
// request (template `plain_tmpl`: prompt prefill, then the output decoded). A session of several
// rows is one workflow (template `session_tmpl`): its first row is the root (the prompt, and the
// output as the answer decoded after the last round); every later row is a branch prefilling its
// prompt tokens on top of the shared context and decoding its output tokens. Later rows form
// rounds in file order: without agent ids each is a round of its own; with them a round takes
// consecutive rows of distinct agent ids, a repeated (or empty) agent id starting the next round.
// A round waits for the one before (the engine's join, of every branch); every round of a session
// must have the same number of branches (the engine's join waits for one count per workflow) and a
// session at most 64 rounds of at most 4096 branches, else an InputError naming the line.
std::vector<WorkflowSpec> request_workflows(const std::vector<RequestRow>& rows, const std::string& path,
                                            int plain_tmpl, int session_tmpl);

}  // namespace ahbm::serve
