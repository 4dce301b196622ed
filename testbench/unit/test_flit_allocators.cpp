// The staged router's allocators (hw/noc/flit_allocators.h) on hand-built request matrices, away
// from any network: every switch allocator gives a valid matching (a grant only where requested,
// one label per row, one row per column, a won label's columns never left idle), the maximal ones
// a maximal matching; iSLIP's pointers move only on accepted grants in the first iteration, where
// output-first's move on every grant; wavefront matches a permutation whole and rotates its
// priority diagonal; repeated allocations are fair. The VC allocators: selection (lowest, round
// robin across ranges within one allocation), nomination and arbitration, grant/accept pointers.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hw/noc/flit_allocators.h"

using namespace ahbm;

namespace {

struct Req {
  int row, col, label;
};

using SwitchFactory = std::function<std::unique_ptr<SwitchAllocator>(int rows, int cols)>;

// Every switch allocator, by name; the separable ones with `iters` iterations.
std::map<std::string, SwitchFactory> switch_allocators(int iters) {
  return {
      {"greedy", [](int r, int c) { return std::make_unique<GreedySwitchAllocator>(r, c); }},
      {"input-first", [iters](int r, int c) { return std::make_unique<InputFirstSwitchAllocator>(r, c, iters); }},
      {"output-first", [iters](int r, int c) { return std::make_unique<OutputFirstSwitchAllocator>(r, c, iters); }},
      {"islip", [iters](int r, int c) { return std::make_unique<IslipSwitchAllocator>(r, c, iters); }},
      {"wavefront", [](int r, int c) { return std::make_unique<WavefrontSwitchAllocator>(r, c); }},
  };
}

void run(SwitchAllocator& a, const std::vector<Req>& reqs) {
  a.clear();
  for (const Req& q : reqs) a.add_request(q.row, q.col, q.label);
  a.allocate();
}

bool requested(const std::vector<Req>& reqs, int row, int col, int label) {
  for (const Req& q : reqs)
    if (q.row == row && q.col == col && q.label == label) return true;
  return false;
}

// A grant only where the row asked for the column with the label it won; every row that won has a
// column; none of a won label's columns is left idle.
void expect_valid(const SwitchAllocator& a, const std::vector<Req>& reqs, const std::string& what) {
  std::vector<int> cols_of(size_t(a.rows()), 0);
  for (int col = 0; col < a.cols(); ++col) {
    const int row = a.row_of(col);
    if (row < 0) continue;
    ++cols_of[size_t(row)];
    EXPECT_TRUE(requested(reqs, row, col, a.label_of(row))) << what << ": column " << col << " to row " << row;
  }
  for (int row = 0; row < a.rows(); ++row)
    EXPECT_TRUE(a.label_of(row) < 0 || cols_of[size_t(row)] > 0) << what << ": row " << row << " won no column";
  for (const Req& q : reqs)
    EXPECT_TRUE(a.label_of(q.row) != q.label || a.row_of(q.col) >= 0) << what << ": column " << q.col << " left idle";
}

// No request between a row that won nothing and a free column.
void expect_maximal(const SwitchAllocator& a, const std::vector<Req>& reqs, const std::string& what) {
  for (const Req& q : reqs)
    EXPECT_FALSE(a.label_of(q.row) < 0 && a.row_of(q.col) < 0)
        << what << ": row " << q.row << " and column " << q.col << " both idle";
}

std::vector<Req> random_requests(std::mt19937& rng, int rows, int cols) {
  std::vector<Req> reqs;
  for (int row = 0; row < rows; ++row)
    for (int label = 0; label < 3; ++label) {
      if (rng() % 3 == 0) continue;
      const int fanout = rng() % 4 == 0 ? 2 : 1;  // some multicast labels
      for (int k = 0; k < fanout; ++k) reqs.push_back({row, int(rng() % unsigned(cols)), label});
    }
  return reqs;
}

}  // namespace

TEST(FlitSwitchAllocators, ValidMatchingsOnRandomMatrices) {
  for (int iters : {1, 8}) {
    for (const auto& [name, make] : switch_allocators(iters)) {
      std::mt19937 rng(17);
      for (int trial = 0; trial < 60; ++trial) {
        const int rows = 1 + int(rng() % 6), cols = 1 + int(rng() % 6);
        auto a = make(rows, cols);
        for (int round = 0; round < 3; ++round) {  // the arbitration state moves between rounds
          const std::vector<Req> reqs = random_requests(rng, rows, cols);
          run(*a, reqs);
          const std::string what = name + " iters " + std::to_string(iters) + " trial " + std::to_string(trial);
          expect_valid(*a, reqs, what);
          // Greedy and wavefront are maximal in one pass, the separable ones given enough iterations.
          if (name == "greedy" || name == "wavefront" || iters == 8) expect_maximal(*a, reqs, what);
        }
      }
    }
  }
}

TEST(FlitSwitchAllocators, RoundRobinIsFairOverRepeatedAllocations) {
  // Four rows always want column 0: each wins it once every four allocations.
  for (const auto& [name, make] : switch_allocators(1)) {
    auto a = make(4, 2);
    std::vector<Req> reqs;
    for (int row = 0; row < 4; ++row) reqs.push_back({row, 0, 10 + row});
    std::vector<int> wins(4, 0);
    for (int round = 0; round < 12; ++round) {
      run(*a, reqs);
      ASSERT_GE(a->row_of(0), 0) << name;
      ++wins[size_t(a->row_of(0))];
      EXPECT_EQ(a->label_of(a->row_of(0)), 10 + a->row_of(0)) << name;
    }
    EXPECT_EQ(wins, std::vector<int>(4, 3)) << name;
  }
}

TEST(FlitSwitchAllocators, GreedyTriesTheNextLabelInputFirstWaitsAnIteration) {
  // Row 0 wants column 0; row 1 prefers column 0 (label 2) but could use column 1 (label 3).
  const std::vector<Req> reqs = {{0, 0, 5}, {1, 0, 2}, {1, 1, 3}};
  GreedySwitchAllocator greedy(2, 2);
  run(greedy, reqs);
  EXPECT_EQ(greedy.first_row(), 0);
  EXPECT_EQ(greedy.row_of(0), 0);
  EXPECT_EQ(greedy.label_of(1), 3);
  EXPECT_EQ(greedy.row_of(1), 1);
  // Input-first: row 1 nominates label 2, loses column 0 to row 0, and sends nothing ...
  InputFirstSwitchAllocator once(2, 2, 1);
  run(once, reqs);
  EXPECT_EQ(once.row_of(0), 0);
  EXPECT_EQ(once.label_of(1), -1);
  EXPECT_EQ(once.row_of(1), -1);
  // ... until a second iteration, in which it nominates label 3.
  InputFirstSwitchAllocator twice(2, 2, 2);
  run(twice, reqs);
  EXPECT_EQ(twice.label_of(1), 3);
  EXPECT_EQ(twice.row_of(1), 1);
}

namespace {

// Runs `first`, then `second`, on iSLIP and on output-first (`rows` x 2, `iters` iterations):
// checks the rows `first` gives columns 0 and 1, and returns the row each gives column 1 in
// `second` ({iSLIP, output-first}).
std::pair<int, int> column1_then(int rows, int iters, const std::vector<Req>& first, std::pair<int, int> first_rows,
                                 const std::vector<Req>& second) {
  IslipSwitchAllocator islip(rows, 2, iters);
  OutputFirstSwitchAllocator rrm(rows, 2, iters);
  for (SwitchAllocator* a : {static_cast<SwitchAllocator*>(&islip), static_cast<SwitchAllocator*>(&rrm)}) {
    run(*a, first);
    EXPECT_EQ(std::make_pair(a->row_of(0), a->row_of(1)), first_rows);
    run(*a, second);
  }
  return {islip.row_of(1), rrm.row_of(1)};
}

}  // namespace

TEST(FlitSwitchAllocators, IslipPointersMoveOnlyOnAcceptedGrants) {
  // Row 0 asks for both columns (two labels); columns 0 and 1 both grant it, it accepts column 0.
  // Column 1's grant was not accepted: iSLIP leaves its pointer at row 0, output-first moves it
  // past row 0. Then rows 0 and 1 both ask for column 1.
  EXPECT_EQ(column1_then(2, 1, {{0, 0, 0}, {0, 1, 1}}, {0, -1}, {{0, 1, 0}, {1, 1, 1}}), std::make_pair(0, 1));
}

TEST(FlitSwitchAllocators, IslipPointersMoveOnlyInTheFirstIteration) {
  // Iteration 1 matches row 0 with column 0; iteration 2 gives column 1 to row 1, which must not
  // move column 1's pointer past row 1 (iSLIP) but does with output-first. Then rows 0 and 2 ask
  // for column 1.
  EXPECT_EQ(column1_then(3, 2, {{0, 0, 0}, {0, 1, 1}, {1, 1, 2}}, {0, 1}, {{0, 1, 0}, {2, 1, 1}}),
            std::make_pair(0, 2));
}

TEST(FlitSwitchAllocators, OneToOneMatchingsReplicateAMulticastLabel) {
  // Row 0's label 7 wants every column; row 1 wants column 1. The one-to-one matching gives row 0
  // one column; the switch copies the flit to the others still free.
  const std::vector<Req> reqs = {{0, 0, 7}, {0, 1, 7}, {0, 2, 7}, {1, 1, 4}};
  IslipSwitchAllocator islip(2, 3, 1);
  run(islip, reqs);
  for (int col = 0; col < 3; ++col) EXPECT_EQ(islip.row_of(col), 0) << col;
  EXPECT_EQ(islip.label_of(1), -1);
}

TEST(FlitSwitchAllocators, WavefrontMatchesAPermutationWholeAndRotatesItsDiagonal) {
  const std::vector<int> perm = {2, 0, 3, 1};
  std::vector<Req> reqs;
  for (int row = 0; row < 4; ++row) reqs.push_back({row, perm[size_t(row)], row});
  WavefrontSwitchAllocator wf(4, 4);
  for (int round = 0; round < 4; ++round) {  // from every priority diagonal
    run(wf, reqs);
    for (int row = 0; row < 4; ++row) EXPECT_EQ(wf.row_of(perm[size_t(row)]), row) << round;
  }
  // Every cell requested: the priority diagonal (row + col = d mod 3) wins whole, d = 0, then 1.
  std::vector<Req> all;
  for (int row = 0; row < 3; ++row)
    for (int col = 0; col < 3; ++col) all.push_back({row, col, row});
  WavefrontSwitchAllocator square(3, 3);
  for (int d = 0; d < 2; ++d) {
    run(square, all);
    for (int row = 0; row < 3; ++row) EXPECT_EQ(square.row_of((d - row + 3) % 3), row) << d;
  }
}

namespace {

struct VcOpt {
  int port, first, count;
  uint64_t free;
};
struct VcReq {
  int input;
  std::vector<VcOpt> options;
};

void run(VcAllocator& a, const std::vector<VcReq>& reqs) {
  a.clear();
  for (const VcReq& q : reqs) {
    a.add_request(q.input);
    for (const VcOpt& o : q.options) a.add_option(o.port, o.first, o.count, o.free);
  }
  a.allocate();
}

}  // namespace

TEST(FlitVcAllocators, GreedyTakesTheSelectedFreeVcInOrder) {
  GreedyVcAllocator lowest(3, 1, 4, false);
  const VcOpt odd{0, 0, 4, 0b1010};  // VCs 1 and 3 free
  run(lowest, {{0, {odd}}, {1, {odd}}, {2, {odd}}});
  EXPECT_EQ(lowest.vc_of(0), 1);
  EXPECT_EQ(lowest.vc_of(1), 3);
  EXPECT_EQ(lowest.vc_of(2), -1);
  EXPECT_FALSE(lowest.retry());  // every VC it could take was taken
  // Round robin: the port's pointer moves with each grant, also across the ranges of different
  // classes in one allocation (VC 0 of class 0 leaves it at 1: class 1 starts at its VC 1 = 3).
  GreedyVcAllocator rr(2, 1, 4, true);
  run(rr, {{0, {{0, 0, 2, 0b1111}}}, {1, {{0, 2, 2, 0b1111}}}});
  EXPECT_EQ(rr.vc_of(0), 0);
  EXPECT_EQ(rr.vc_of(1), 3);
}

TEST(FlitVcAllocators, GreedyFallsBackToTheNextOption) {
  // Adaptive VCs on port 1 (none free), on port 2 (VC 2 free), the escape VC 0 on port 0.
  const std::vector<VcOpt> options = {{1, 1, 3, 0}, {2, 1, 3, 0b0100}, {0, 0, 1, 0b0001}};
  GreedyVcAllocator a(2, 3, 4, false);
  run(a, {{0, options}, {1, options}});
  EXPECT_EQ(a.port_of(0), 2);
  EXPECT_EQ(a.vc_of(0), 2);
  EXPECT_EQ(a.port_of(1), 0);
  EXPECT_EQ(a.vc_of(1), 0);
}

TEST(FlitVcAllocators, InputFirstNomineesArbitrateRoundRobin) {
  // Both inputs nominate VC 0 (lowest); one wins, the other waits although VC 1 is free.
  InputFirstVcAllocator a(2, 1, 2, false);
  const std::vector<VcReq> reqs = {{0, {{0, 0, 2, 0b11}}}, {1, {{0, 0, 2, 0b11}}}};
  std::vector<int> winners;
  for (int round = 0; round < 4; ++round) {
    run(a, reqs);
    EXPECT_EQ(a.vc_of(0) < 0, a.vc_of(1) >= 0) << round;  // exactly one wins
    EXPECT_TRUE(a.vc_of(0) == 0 || a.vc_of(1) == 0) << round;
    EXPECT_TRUE(a.retry());
    winners.push_back(a.vc_of(0) == 0 ? 0 : 1);
  }
  EXPECT_EQ(winners, (std::vector<int>{0, 1, 0, 1}));
}

TEST(FlitVcAllocators, IslipMovesAVcPointerOnlyOnAccept) {
  // Input 0 may take VC 0 or 1, input 1 only VC 0. Both VCs grant input 0, which accepts VC 0:
  // VC 1's grant is not accepted. Output-first moves VC 1's pointer past input 0, iSLIP does not;
  // then both inputs want VC 1.
  const std::vector<VcReq> first = {{0, {{0, 0, 2, 0b11}}}, {1, {{0, 0, 1, 0b11}}}};
  const std::vector<VcReq> second = {{0, {{0, 1, 1, 0b10}}}, {1, {{0, 1, 1, 0b10}}}};
  IslipVcAllocator islip(2, 1, 2, false);
  OutputFirstVcAllocator rrm(2, 1, 2, false);
  for (VcAllocator* a : {static_cast<VcAllocator*>(&islip), static_cast<VcAllocator*>(&rrm)}) {
    run(*a, first);
    EXPECT_EQ(a->vc_of(0), 0);
    EXPECT_EQ(a->vc_of(1), -1);
    EXPECT_TRUE(a->retry());
    run(*a, second);
  }
  EXPECT_EQ(islip.vc_of(0), 1);
  EXPECT_EQ(islip.vc_of(1), -1);
  EXPECT_EQ(rrm.vc_of(0), -1);
  EXPECT_EQ(rrm.vc_of(1), 1);
}

TEST(FlitVcAllocators, ValidGrantsOnRandomRequests) {
  std::mt19937 rng(5);
  for (int kind = 0; kind < 4; ++kind) {
    const int inputs = 6, ports = 3, vcs = 4;
    std::unique_ptr<VcAllocator> a;
    if (kind == 0) a = std::make_unique<GreedyVcAllocator>(inputs, ports, vcs, true);
    if (kind == 1) a = std::make_unique<InputFirstVcAllocator>(inputs, ports, vcs, true);
    if (kind == 2) a = std::make_unique<OutputFirstVcAllocator>(inputs, ports, vcs, false);
    if (kind == 3) a = std::make_unique<IslipVcAllocator>(inputs, ports, vcs, false);
    for (int trial = 0; trial < 100; ++trial) {
      std::vector<uint64_t> avail(ports);
      for (auto& f : avail) f = rng() & 0xF;
      std::vector<VcReq> reqs;
      const int n = 1 + int(rng() % 6);
      for (int i = 0; i < n; ++i) {
        const int port = int(rng() % ports), half = int(rng() % 2) * 2;
        reqs.push_back({int(rng() % inputs), {{port, half, 2, avail[size_t(port)]}}});
      }
      run(*a, reqs);
      std::map<std::pair<int, int>, int> taken;
      for (size_t i = 0; i < reqs.size(); ++i) {
        const int vc = a->vc_of(i);
        const VcOpt& o = reqs[i].options[0];
        if (vc < 0) {
          // Greedy is maximal: a loser found every VC of its range taken.
          for (int v = o.first; kind == 0 && v < o.first + o.count; ++v) {
            EXPECT_TRUE(!(o.free >> v & 1) || taken.count({o.port, v})) << trial;
          }
          continue;
        }
        EXPECT_EQ(a->port_of(i), o.port);
        EXPECT_TRUE(vc >= o.first && vc < o.first + o.count && (o.free >> vc & 1)) << kind << " " << trial;
        EXPECT_EQ(taken[std::make_pair(o.port, vc)]++, 0) << kind << " " << trial << ": VC granted twice";
      }
    }
  }
}
