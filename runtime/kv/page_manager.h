#pragma once
// Paged KV cache of one KV-head group (note §3.1): fixed-size pages of `page_tokens` tokens, a
// pool of physical page slots per PE, one page table per sequence (the parent agent and every
// branch). fork() makes a branch whose table references the parent's pages (reference counts,
// no copy); append() fills the last page or takes a new one from the PE a placement rule picks;
// a partly filled last page that another sequence still references is copied first
// (copy-on-write), so a shared page never changes; release() drops a table and frees every page
// whose last reference it held. Running out of slots is an InputError, never silent reuse.
//
// One page slot holds its tokens' K and V for every layer and for every KV head the group
// serves (all of them share the same token layout), so the pool size is
// capacity / (page_tokens x head_dim x 2 x storage bytes x layers x heads per group).
// Pure bookkeeping: no values, no SystemC.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ahbm {

using PageId = int32_t;
using SeqId = int32_t;

struct KvPage {
  int pe = 0;
  int64_t slot = 0;            // physical slot in that PE's pool
  int refs = 0;                // page tables referencing it; 0 once freed
  int32_t first_pos = 0;       // absolute position of its first token
  std::vector<int> origin;     // per filled token: the producer of its K/V (tensor owner id)
  // Per filled token, the write that put its K/V here (KvPageManager::writes(): an append, or
  // the copy that made this page). A step's timed KV writes are the tokens written after the
  // count it started at (runtime/plan/planner.cpp, docs/model.md "Timed KV writes").
  std::vector<uint64_t> written_at;
  int copied = 0;              // its first `copied` tokens were copied from another page ...
  int copied_from_pe = -1;     // ... held by this PE (copy-on-write, or a no-sharing fork)
  int filled() const { return int(origin.size()); }
};

class KvPageManager;
// Picks the PE for the next new page of sequence `seq` (its table's size is the page's index).
using PlacePage = std::function<int(const KvPageManager& kv, SeqId seq)>;

class KvPageManager {
 public:
  // `pages_per_pe` < 0: unbounded (capacity baselines). `capacity_note` ends the
  // out-of-capacity message (which config fields set the pool size).
  KvPageManager(int pes, int64_t pages_per_pe, int page_tokens, std::string capacity_note = "");

  SeqId create();
  // A branch sharing every page of `parent` (reference counts only).
  SeqId fork(SeqId parent);
  // The no-sharing baseline: a branch holding private copies of every page of `parent`.
  SeqId fork_copy(SeqId parent, const PlacePage& place);
  // Appends `n` tokens produced by `origin` at the sequence's next positions. `cached`: tokens
  // in the KV cache before the run (a prompt's cached prefix): no step is charged their write.
  void append(SeqId s, int origin, int n, const PlacePage& place, bool cached = false);
  void release(SeqId s);
  // New pages append(s, _, n) would take (its copy-on-write copy of a shared partly filled last
  // page included), without taking them: what a scheduler checks against the free pages before
  // it lets a step grow a sequence.
  int64_t pages_for_append(SeqId s, int n) const;

  bool live(SeqId s) const;
  int32_t length(SeqId s) const;
  const std::vector<PageId>& table(SeqId s) const;
  const KvPage& page(PageId p) const { return pages_.at(size_t(p)); }
  int sequences() const { return int(seqs_.size()); }

  int pes() const { return pes_; }
  int page_tokens() const { return page_tokens_; }
  int64_t pages_per_pe() const { return pages_per_pe_; }
  bool has_room(int pe) const { return pages_per_pe_ < 0 || in_use_[size_t(pe)] < pages_per_pe_; }
  int64_t in_use(int pe) const { return in_use_[size_t(pe)]; }
  int64_t in_use() const;
  int64_t peak(int pe) const { return peak_[size_t(pe)]; }
  int64_t peak_total() const { return peak_total_; }
  int64_t free_list_size(int pe) const { return int64_t(free_[size_t(pe)].size()); }
  int64_t slots_touched(int pe) const { return fresh_[size_t(pe)]; }  // high-water slot index
  int64_t allocations() const { return allocations_; }
  int64_t frees() const { return frees_; }
  int64_t cow_copies() const { return cow_copies_; }
  // Writes so far (appends and page copies, one count each): a step records it before its KV
  // updates (Step::kv_since) and is charged every token written after it.
  uint64_t writes() const { return writes_; }
  // Live pages referenced by more than one table / by exactly one.
  int64_t shared_pages() const;
  int64_t private_pages() const;
  // Sum over live pages of (refs - 1): page copies that sharing avoids right now.
  int64_t pages_saved() const;

  // Recounts every reference from the page tables and checks refcounts, per-PE counts and
  // free lists (disjoint from live slots, together exactly the slots ever used); throws
  // std::logic_error naming the first mismatch.
  void check_invariants() const;

 private:
  struct Seq {
    bool live = true;
    int32_t length = 0;
    std::vector<PageId> table;
  };
  Seq& seq(SeqId s);
  const Seq& seq(SeqId s) const;
  PageId allocate(int pe, int32_t first_pos);
  void unref(PageId p);
  int checked_pe(int pe) const;

  int pes_;
  int64_t pages_per_pe_;
  int page_tokens_;
  std::string capacity_note_;
  std::vector<KvPage> pages_;           // every page ever allocated (freed ones keep refs == 0)
  std::vector<Seq> seqs_;
  std::vector<std::vector<int64_t>> free_;  // per PE: released slots, reused last-in first-out
  std::vector<int64_t> fresh_;          // per PE: slots [0, fresh) have been handed out at least once
  std::vector<int64_t> in_use_, peak_;
  int64_t peak_total_ = 0, allocations_ = 0, frees_ = 0, cow_copies_ = 0;
  uint64_t writes_ = 0;
  // Makes page `to` a copy of the filled tokens of page `from` (one write).
  void copy_page(PageId from, PageId to);
};

}  // namespace ahbm
