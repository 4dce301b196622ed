#pragma once
// Serve admission rules (docs/serving.md, "Admission"): when a waiting workflow may enter a pool,
// how many pages it holds reserved there, and whether its pages grow on demand (then a step that
// cannot get its pages preempts, by the preemption rule). One small class per rule, each in its
// own file (admission_<name>.cpp), registered by one line in builtin_admission_rules(); the
// engine asks only this interface, and a caller may pass a registry of its own (ServeOptions).
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/serve/registry.h"

namespace ahbm::serve {

// What a rule sees of a waiting workflow (its pages at the pool's page size).
struct AdmissionCandidate {
  int64_t reservation = 0;   // the most pages it may hold at once (engine.cpp, reservation)
  int64_t prompt_pages = 0;  // its prompt's pages
  int64_t pages_now = 0;     // what it needs now: a new one its prompt's, a preempted one what it restores and its next token
  bool pbd = false;          // P-B-D: it enters a prefill pool, which holds only its prompt
};

// What a rule sees of a pool at a step boundary.
struct PoolRoom {
  int64_t total = 0;     // its pages
  int64_t reserved = 0;  // pages its workflows hold reserved (held())
  int64_t in_use = 0;    // pages its sequences hold
  // Free pages less what the admitted workflows' next parts append (vLLM schedules the running
  // before the waiting); counted only for a rule that grows_on_demand().
  int64_t free_now = 0;
  int64_t promised = 0;  // pages promised at this boundary to the workflows admitted before
};

class AdmissionRule {
 public:
  static constexpr const char* kKind = "admission rule";
  virtual ~AdmissionRule() = default;
  // Pages the candidate needs to enter (promised to it at this boundary once admitted).
  virtual int64_t need(const AdmissionCandidate& c) const = 0;
  // Whether `need` pages fit the pool now.
  virtual bool fits(int64_t need, const PoolRoom& room) const = 0;
  // The pool's load when choosing among pools (slices): the least-loaded one that fits wins.
  virtual int64_t load(const PoolRoom& room) const = 0;
  // Pages a workflow holds reserved in the pool where it decodes, of its `reservation`.
  virtual int64_t held(int64_t reservation) const = 0;
  // P-B-D: pages a decode pool must have for a buffered workflow it pulls.
  virtual int64_t pull_need(const AdmissionCandidate& c) const = 0;
  // true: pages are taken as the work grows, not held from admission; the engine counts what is
  // free now (PoolRoom::free_now) and a step part that cannot get its pages preempts.
  virtual bool grows_on_demand() const = 0;
};

using AdmissionEntry = PolicyEntry<AdmissionRule>;
using AdmissionRegistry = Registry<AdmissionEntry>;

// reserve: a workflow's whole reservation up front, so a run never runs out of KV. on_demand:
// the pages it needs now; later growth preempts (vLLM).
AdmissionRegistry builtin_admission_rules();

}  // namespace ahbm::serve
