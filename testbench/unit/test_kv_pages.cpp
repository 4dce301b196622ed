// The KV page manager: fork shares pages by reference count, append fills and allocates with
// copy-on-write, release frees on the last reference; a random-sequence property test checks
// every sequence's token contents against a plain model and the pool's accounting after every
// operation (no leak, no double free).
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "hw/common/base/error.h"
#include "runtime/kv/page_manager.h"
#include "runtime/kv/placement.h"

using namespace ahbm;

namespace {

// (origin, position) of every token of `s`, read through its page table.
std::vector<std::pair<int, int>> contents(const KvPageManager& kv, SeqId s) {
  std::vector<std::pair<int, int>> out;
  for (PageId id : kv.table(s)) {
    const KvPage& p = kv.page(id);
    for (int i = 0; i < p.filled(); ++i) out.emplace_back(p.origin[size_t(i)], p.first_pos + i);
  }
  return out;
}

}  // namespace

TEST(KvPages, ForkSharesWithoutCopyAndFreesOnLastReference) {
  KvPageManager kv(4, 100, 16);
  BalancedPlacer place;
  const SeqId main = kv.create();
  kv.append(main, -1, 64, prefix_placer(PrefixPlacement::contiguous, 4));
  EXPECT_EQ(kv.in_use(), 4);
  for (int pe = 0; pe < 4; ++pe) EXPECT_EQ(kv.in_use(pe), 1);  // one contiguous page per PE
  const SeqId a = kv.fork(main), b = kv.fork(main);
  EXPECT_EQ(kv.in_use(), 4);  // no copy
  EXPECT_EQ(kv.shared_pages(), 4);
  EXPECT_EQ(kv.pages_saved(), 8);  // three tables, four pages each
  kv.append(a, 0, 20, std::ref(place));  // page-aligned prefix: new private pages, no COW
  EXPECT_EQ(kv.cow_copies(), 0);
  EXPECT_EQ(kv.in_use(), 6);
  kv.release(main);
  kv.release(b);
  EXPECT_EQ(kv.in_use(), 6);  // a still holds the prefix
  kv.release(a);
  EXPECT_EQ(kv.in_use(), 0);
  EXPECT_EQ(kv.frees(), kv.allocations());
  kv.check_invariants();
  EXPECT_THROW(kv.release(a), std::logic_error);  // double release is refused, not a double free
}

TEST(KvPages, AppendIntoPartlySharedPageCopiesOnWrite) {
  KvPageManager kv(2, 100, 16);
  BalancedPlacer place;
  const SeqId main = kv.create();
  kv.append(main, -1, 20, prefix_placer(PrefixPlacement::interleaved, 2));  // second page holds 4
  const SeqId a = kv.fork(main);
  const PageId shared_last = kv.table(main)[1];
  kv.append(a, 7, 3, std::ref(place));
  EXPECT_EQ(kv.cow_copies(), 1);
  EXPECT_NE(kv.table(a)[1], shared_last);
  EXPECT_EQ(kv.table(a)[0], kv.table(main)[0]);   // the full page stays shared
  EXPECT_EQ(kv.page(shared_last).filled(), 4);    // the parent's page is untouched
  EXPECT_EQ(kv.page(kv.table(a)[1]).filled(), 7);
  EXPECT_EQ(kv.page(kv.table(a)[1]).origin[3], -1);  // copied prefix tokens keep their producer
  EXPECT_EQ(kv.page(kv.table(a)[1]).origin[4], 7);
  EXPECT_EQ(kv.page(shared_last).refs, 1);
  kv.append(main, -1, 2, std::ref(place));  // sole owner again: appends in place
  EXPECT_EQ(kv.cow_copies(), 1);
  EXPECT_EQ(kv.table(main)[1], shared_last);
  kv.check_invariants();
}

TEST(KvPages, OutOfCapacityIsAnInputError) {
  KvPageManager kv(2, 3, 4, "pool from pe.hbm.capacity_bytes");
  BalancedPlacer place;
  const SeqId s = kv.create();
  kv.append(s, 0, 24, std::ref(place));  // 6 pages = both pools full
  try {
    kv.append(s, 0, 1, std::ref(place));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("KV capacity exceeded"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("pe.hbm.capacity_bytes"), std::string::npos);
  }
  kv.check_invariants();  // the failed append left the books consistent
}

TEST(KvPages, BalancedPlacementSpreadsPrivatePages) {
  KvPageManager kv(8, 100, 16);
  BalancedPlacer place;
  const SeqId main = kv.create();
  kv.append(main, -1, 8 * 16 * 2, prefix_placer(PrefixPlacement::contiguous, 16));
  for (int a = 0; a < 8; ++a) kv.append(kv.fork(main), a, 16, std::ref(place));
  for (int pe = 0; pe < 8; ++pe) EXPECT_EQ(kv.in_use(pe), 3) << pe;
}

TEST(KvPages, PrefixPlacementRules) {
  // 10 pages on 4 PEs: contiguous runs of 3,3,2,2; interleaved i % 4.
  const std::vector<int> contiguous = {0, 0, 0, 1, 1, 1, 2, 2, 3, 3};
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(prefix_page_pe(PrefixPlacement::contiguous, i, 10, 4), contiguous[size_t(i)]) << i;
    EXPECT_EQ(prefix_page_pe(PrefixPlacement::interleaved, i, 10, 4), i % 4) << i;
  }
}

// Random fork / append / release sequences over a small pool, checked after every step:
// refcounts equal the references in the tables, free lists and live slots partition the slots
// ever handed out, and every live sequence reads back exactly the tokens a plain model holds.
TEST(KvPages, RandomForkAppendReleaseKeepsBooksExact) {
  int total_overflows = 0;
  int64_t total_cows = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    const int pes = 1 + int(rng() % 4), page = 1 + int(rng() % 6);
    KvPageManager kv(pes, 40, page);
    BalancedPlacer place;
    std::map<SeqId, std::vector<std::pair<int, int>>> model;  // live sequence -> tokens
    int overflows = 0;
    for (int op = 0; op < 400; ++op) {
      const int kind = int(rng() % 10);
      std::vector<SeqId> live;
      for (const auto& [s, _] : model) live.push_back(s);
      if (live.empty() || kind == 0) {
        model[kv.create()] = {};
      } else if (kind <= 2) {
        const SeqId parent = live[rng() % live.size()];
        model[kv.fork(parent)] = model[parent];
      } else if (kind <= 7) {
        const SeqId s = live[rng() % live.size()];
        const int n = 1 + int(rng() % (2 * page + 1));
        const int origin = int(rng() % 5) - 1;
        // Copy-on-write happens iff the last page is partly filled and referenced elsewhere.
        const auto& t = kv.table(s);
        const bool cow = !t.empty() && kv.page(t.back()).filled() < page && kv.page(t.back()).refs > 1;
        const int32_t len = kv.length(s);
        const int64_t cows_before = kv.cow_copies();
        // pages_for_append predicts the pages the append takes (a serve scheduler's check).
        const int64_t predicted = kv.pages_for_append(s, n);
        const int64_t allocations_before = kv.allocations(), free_before = int64_t(pes) * 40 - kv.in_use();
        bool full = false;
        try {
          kv.append(s, origin, n, std::ref(place));
        } catch (const InputError&) {
          full = true;  // pool full: the tokens that fitted stay appended
        }
        const int32_t added = kv.length(s) - len;
        if (!full) {
          ASSERT_EQ(added, n);
          ASSERT_EQ(kv.cow_copies() - cows_before, cow ? 1 : 0) << "seed " << seed << " op " << op;
          ASSERT_EQ(kv.allocations() - allocations_before, predicted) << "seed " << seed << " op " << op;
        } else {
          ASSERT_GT(predicted, free_before) << "seed " << seed << " op " << op;
        }
        for (int i = 0; i < added; ++i) model[s].emplace_back(origin, len + i);
        if (full) {  // make room: drop the longest sequence
          ++overflows;
          SeqId longest = live[0];
          for (SeqId q : live) if (model[q].size() > model[longest].size()) longest = q;
          kv.release(longest);
          model.erase(longest);
        }
      } else {
        const SeqId s = live[rng() % live.size()];
        kv.release(s);
        model.erase(s);
      }
      ASSERT_NO_THROW(kv.check_invariants()) << "seed " << seed << " op " << op;
      for (const auto& [s, toks] : model) ASSERT_EQ(contents(kv, s), toks) << "seed " << seed << " op " << op;
    }
    total_overflows += overflows;
    total_cows += kv.cow_copies();
    for (const auto& [s, _] : model) kv.release(s);
    kv.check_invariants();
    EXPECT_EQ(kv.in_use(), 0) << "leak, seed " << seed;
    EXPECT_EQ(kv.allocations(), kv.frees()) << "seed " << seed;
    for (int pe = 0; pe < pes; ++pe) EXPECT_EQ(kv.free_list_size(pe), kv.slots_touched(pe));
  }
  // The random walk exercised the interesting paths.
  EXPECT_GT(total_overflows, 0);
  EXPECT_GT(total_cows, 0);
}
