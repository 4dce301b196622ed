#include "runtime/serve/lifecycle.h"

#include <algorithm>

#include "runtime/scenario/scenario.h"

namespace ahbm::serve {

void Lifecycle::start(Flow& f, KvPageManager& pages, const PlacePage& prefix, double now, bool pipelined) {
  const WorkflowSpec& s = *f.spec;
  f.parent.sa.name = "w" + std::to_string(s.id) + "." + kMainAgentName;
  f.parent.sa.origin = tensor_origin_prefix();
  f.parent.sa.seq = pages.create();
  // The cached part of the prompt is in the KV cache already; the rest is the parent's prefill
  // (both on the prefix placement, as a run's session places its prefix).
  pages.append(f.parent.sa.seq, tensor_origin_prefix(), s.cached_tokens, prefix, /*cached=*/true);
  f.parent.sa.length = pages.length(f.parent.sa.seq);
  // The main request: the parent's thread from the workflow's arrival to its answer (its
  // prefills: the uncached prompt and every join's continuation).
  f.parent.request = log_.open(s.id, -1, -1, s.prompt_tokens - s.cached_tokens + int(s.rounds.size()) * s.join_tokens,
                               s.answer_tokens, s.arrival_ns);
  f.parent.prefill_left = s.prompt_tokens - s.cached_tokens;
  // P-B-D: a prompt cached whole goes to the buffer when it has room (the engine's build_step).
  if (f.parent.prefill_left == 0 && !pipelined) advance(f, pages, now);
}

void Lifecycle::start_round(Flow& f, KvPageManager& pages, double now) {
  const std::vector<BranchSpec>& round = f.spec->rounds[size_t(f.round)];
  f.branches.clear();
  f.branches_done = 0;
  f.in_round = true;
  for (size_t b = 0; b < round.size(); ++b) {
    Agent a;
    a.sa.name = "w" + std::to_string(f.spec->id) + ".r" + std::to_string(f.round) + ".b" + std::to_string(b);
    a.sa.agent = int(b);
    a.sa.origin = int(b);
    a.sa.seq = share_prefix_ ? pages.fork(f.parent.sa.seq)
                             : pages.fork_copy(f.parent.sa.seq,
                                               [&f](const KvPageManager& kv, SeqId s) { return f.placer(kv, s); });
    a.sa.length = pages.length(a.sa.seq);
    a.prefill_left = round[b].new_tokens;
    a.decode_left = round[b].decode_tokens;
    a.request = log_.open(f.spec->id, f.round, int(b), round[b].new_tokens, round[b].decode_tokens, now);
    f.branches.push_back(a);
  }
}

void Lifecycle::join(Flow& f, KvPageManager& pages, double now) {
  // Every branch is released (the run's join releases them too); those a "first" join does not
  // wait for are cancelled where they stand.
  double last_token = -1;
  for (Agent& b : f.branches) {
    if (b.state != AgentState::done) {
      log_.finish(b.request, now, /*cancelled=*/true);
      f.remaining -= b.prefill_left + b.decode_left;
    } else {
      last_token = std::max(last_token, log_.last_token_ns(b.request));
    }
    pages.release(b.sa.seq);
  }
  if (last_token >= 0) log_.tool_wait(f.record, std::max(0.0, now - last_token));
  f.branches.clear();
  f.in_round = false;
  ++f.round;
  f.parent.sa.origin = int(f.spec->rounds[size_t(f.round - 1)].size());  // the parent after the fork
  f.parent.prefill_left = f.spec->join_tokens;
  if (f.parent.prefill_left == 0) advance(f, pages, now);
}

void Lifecycle::advance(Flow& f, KvPageManager& pages, double now) {
  if (f.round < int(f.spec->rounds.size())) return start_round(f, pages, now);
  if (!f.answering) {
    f.answering = true;
    f.parent.decode_left = f.spec->answer_tokens;
    if (f.parent.decode_left > 0) return;
  }
  // Done: the parent's pages go back to the pool with its reservation.
  log_.finish(f.parent.request, now);
  pages.release(f.parent.sa.seq);
  f.done = true;
  events_.done(f);
  log_.done(f.record, now);
}

void Lifecycle::branch_done(Flow& f, Agent& b, KvPageManager& pages, double at_ns, double now) {
  b.state = AgentState::done;
  log_.finish(b.request, at_ns);
  if (++f.branches_done >= f.spec->join_first) join(f, pages, now);
}

void Lifecycle::finish_agent(Flow& f, Agent& a, bool is_parent, KvPageManager& pages, double now) {
  if (is_parent) return f.stage == Stage::prefill ? events_.prefilled(f) : advance(f, pages, now);
  if (f.spec->tool_ns > 0) {
    a.state = AgentState::tool;
    a.tool_until = now + f.spec->tool_ns;
    log_.tool_call(a.request, f.spec->tool_ns);
    return;
  }
  branch_done(f, a, pages, now, now);
}

}  // namespace ahbm::serve
