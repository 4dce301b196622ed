#pragma once
// The allocators of the staged router (FlitNetwork; docs/noc.md, "Router micro-architecture"):
// one interface per kind, switch allocation and VC allocation, and one small class per variant,
// in the manner of BookSim2's allocators (requests in, allocate(), grants out). Each router owns
// one of each, chosen once from FlitParams by make_switch_allocator / make_vc_allocator. An
// allocator keeps its own arbitration state from cycle to cycle (round-robin pointers, the
// wavefront's priority diagonal, the VC selection pointers) and knows nothing of packets, buffers
// or routes: only the requests of the cycle, so each variant can be tested on a hand-built matrix.
#include <cstdint>
#include <memory>
#include <vector>

namespace ahbm {

struct FlitParams;

// Switch allocation on a request matrix: rows are the router's switch inputs, columns its output
// ports. A row asks for a column on behalf of a label (the input VC with a flit for that output);
// the allocation matches each row with at most one label and each column with at most one row. A
// row may get several columns for its label (a multicast flit is replicated in the switch), never
// two labels.
class SwitchAllocator {
 public:
  SwitchAllocator(int rows, int cols);
  virtual ~SwitchAllocator() = default;
  int rows() const { return rows_; }
  int cols() const { return cols_; }

  // Starts an allocation: no requests, no grants. The arbitration state stays.
  void clear();
  // Row `row` asks for column `col` for `label` (>= 0). A row adds its requests in its own order
  // of preference: the first label a row names for a column is its request for that column, and
  // the allocators that pick a label per row (greedy, input-first) take the earliest that can win.
  void add_request(int row, int col, int label) {
    by_row_[size_t(row)].push_back({col, label});
    int& first = first_[size_t(row * cols_ + col)];
    if (first < 0) first = label;
    any_ = true;
  }
  bool has_requests() const { return any_; }
  // Computes the grants. A label that won a column has every other column it asked for that is
  // still free, so a multicast flit goes out on all its free outputs at once.
  void allocate() { match(); }
  int row_of(int col) const { return col_row_[size_t(col)]; }      // the row granted `col`, or -1
  int label_of(int row) const { return row_label_[size_t(row)]; }  // the label `row` won, or -1
  // The row from which the grants are carried out, the others following in increasing order round
  // the matrix: the row the allocator served first. The order changes no grant; it only fixes the
  // order of the events the sends schedule within a cycle, which outputs list.
  virtual int first_row() const { return 0; }

 protected:
  struct Request {
    int col, label;
  };
  // The variant's matching: grant() what it matches, updating its own state.
  virtual void match() = 0;
  const std::vector<Request>& requests_of(int row) const { return by_row_[size_t(row)]; }
  int request(int row, int col) const { return first_[size_t(row * cols_ + col)]; }  // label, or -1
  bool row_free(int row) const { return row_label_[size_t(row)] < 0; }
  bool col_free(int col) const { return col_row_[size_t(col)] < 0; }
  void grant(int row, int col, int label);
  // The first request of `row` for a free column: its label, or -1.
  int first_label(int row) const;
  // For the one-to-one matchings (a row, a column): each matched row's label also takes the other
  // columns it asked for that are still free (the switch copies the flit).
  void replicate();
  // The position of x in a round-robin arbiter over 0 .. n-1 whose pointer is at `from`.
  static int rank(int x, int from, int n) { return (x - from + n) % n; }

 private:
  int rows_, cols_;
  std::vector<std::vector<Request>> by_row_;  // each row's requests in the order added
  std::vector<int> first_;                    // [row * cols + col]: the row's first label for col, or -1
  std::vector<int> col_row_, row_label_;
  bool any_ = false;
};

// Rows in rotating order from a pointer that moves on by one every allocation that grants
// anything; each row takes its first label with a free column and every free column that label
// asked for. A row whose first label lost tries its next: a maximal matching in one pass.
class GreedySwitchAllocator final : public SwitchAllocator {
 public:
  using SwitchAllocator::SwitchAllocator;
  int first_row() const override { return start_; }

 private:
  void match() override;
  int rr_ = 0, start_ = 0;
};

// Separable input-first: each unmatched row nominates one label, its first with a request for a
// free column; each free column grants one nominating row, round robin from its pointer, which
// moves past the row the column is finally granted to. A row whose nominee lost every column gets
// nothing in that iteration, even if another of its labels could have won.
class InputFirstSwitchAllocator final : public SwitchAllocator {
 public:
  InputFirstSwitchAllocator(int rows, int cols, int iterations);

 private:
  void match() override;
  bool iterate();
  int iterations_;
  std::vector<int> arb_;                 // per column: the row with priority
  std::vector<int> bid_, nominee_;  // per iteration: column -> row winning it; row -> label nominated
};

// Request, grant, accept: each free column grants one requesting row (round robin from the
// column's pointer), each row accepts one granting column (round robin from the row's accept
// pointer), up to `iterations` times. Output-first and iSLIP differ only in when pointers move.
class GrantAcceptSwitchAllocator : public SwitchAllocator {
 public:
  GrantAcceptSwitchAllocator(int rows, int cols, int iterations);

 protected:
  // A column's pointer after it granted `row`, and after `row` accepted `col` in `iteration`.
  virtual void on_grant(int col, int row) = 0;
  virtual void on_accept(int row, int col, int iteration) = 0;
  std::vector<int> arb_;     // per column: the row with priority
  std::vector<int> accept_;  // per row: the column with priority

 private:
  void match() override;
  bool iterate(int iteration);
  int iterations_;
  std::vector<int> granted_;  // per iteration: column -> row it granted, or -1
};

// Separable output-first (McKeown's RRM): both pointers move past the winner on every grant and
// every accept, so outputs granting the same row in one cycle tend to move together.
class OutputFirstSwitchAllocator final : public GrantAcceptSwitchAllocator {
 public:
  using GrantAcceptSwitchAllocator::GrantAcceptSwitchAllocator;

 private:
  void on_grant(int col, int row) override;
  void on_accept(int row, int col, int iteration) override;
};

// iSLIP (McKeown, IEEE/ACM ToN 7(2), 1999): a column's pointer moves past a row only when the row
// accepts it, and pointers move only in the first iteration, which desynchronises the outputs.
class IslipSwitchAllocator final : public GrantAcceptSwitchAllocator {
 public:
  using GrantAcceptSwitchAllocator::GrantAcceptSwitchAllocator;

 private:
  void on_grant(int, int) override {}
  void on_accept(int row, int col, int iteration) override;
};

// Wavefront: the matrix, padded square (N = max(rows, cols)), swept diagonal by diagonal from a
// priority diagonal; cells of one diagonal (row + col = d mod N) share no row or column, so each is
// granted when its row and column are still free. One pass gives a maximal matching. The priority
// diagonal moves on by one every allocation.
class WavefrontSwitchAllocator final : public SwitchAllocator {
 public:
  using SwitchAllocator::SwitchAllocator;

 private:
  void match() override;
  int diag_ = 0;
};

// VC allocation: requests of input VCs for one output VC each. A request names its input VC (0 ..
// inputs - 1, router-local: the key the output VCs' round-robin arbiters rank, and the owner of an
// accept pointer) and its options, best first: a port, a range of that port's VCs and which of
// them are free. An input VC may make several requests in one allocation (a multicast head, one
// per output); each gets at most one VC, and each output VC goes to at most one request.
//
// Which free VC of a range a request takes (when the allocator does not decide by arbitration) is
// the router's VC selection: the lowest, or round robin from the one after the port's last choice.
class VcAllocator {
 public:
  // vcs: VCs per port, at most 64 (the free sets are bit masks).
  VcAllocator(int inputs, int ports, int vcs, bool round_robin);
  virtual ~VcAllocator() = default;

  // Starts an allocation: no requests. The arbitration and selection state stays.
  void clear() {
    req_.clear();
    opt_.clear();
  }
  void add_request(int input) {  // request i is the i-th added
    const int at = int(opt_.size());
    req_.push_back({input, at, at});
  }
  // An option of the last request added: VCs first .. first + count - 1 of `port`; bit v of
  // `free` set when VC v of the port is free.
  void add_option(int port, int first, int count, uint64_t free) {
    const uint64_t ones = count >= 64 ? ~uint64_t(0) : (uint64_t(1) << count) - 1;
    opt_.push_back({port, first, count, free & ones << first});
    req_.back().end = int(opt_.size());
  }
  size_t requests() const { return req_.size(); }
  // Computes the grants.
  void allocate() { match(); }
  int port_of(size_t i) const;  // the port of the VC granted to request i
  int vc_of(size_t i) const { return req_[i].vc; }  // the VC granted to request i, or -1
  // Whether a request that lost may win in the next cycle with nothing else changed (the router is
  // then worth stepping again): one lost while others won.
  virtual bool retry() const;

 protected:
  struct Option {
    int port, first, count;
    uint64_t free;  // restricted to the range
  };
  struct Request {
    int input;
    int begin, end;  // its options: opt_[begin, end)
    int option = -1, vc = -1;  // the grant
  };
  virtual void match() = 0;
  // The VC the selection gives among `free` (a subset of the option's range), or -1.
  int select(const Option& o, uint64_t free) const;
  // Gives request i VC `vc` of option `option` and moves the port's selection pointer.
  void grant(size_t i, int option, int vc);
  int inputs_, vcs_;
  std::vector<Request> req_;
  std::vector<Option> opt_;

 private:
  bool round_robin_;
  std::vector<int> next_;  // per port: the round-robin selection pointer, within a range
};

// Requests in the order added, each taking the VC the selection gives in its first option with a
// VC still free: a maximal matching. A loser found every VC it could take taken, so retrying in
// the next cycle is pointless unless the network changes.
class GreedyVcAllocator final : public VcAllocator {
 public:
  GreedyVcAllocator(int inputs, int ports, int vcs, bool round_robin);
  bool retry() const override { return false; }

 private:
  void match() override;
  std::vector<uint64_t> taken_;  // per port: VCs granted in this allocation
};

// The separable VC allocators' arbitration state: per output VC a round-robin pointer over the
// input VCs, per input VC an accept pointer over the VC numbers.
class SeparableVcAllocator : public VcAllocator {
 public:
  SeparableVcAllocator(int inputs, int ports, int vcs, bool round_robin);

 protected:
  int& arb(int port, int vc) { return arb_[size_t(port * vcs_ + vc)]; }
  // Whether request j comes before request i in the round-robin order of the arbiter at `from`
  // (ties, two requests of one input VC, by the order added).
  bool before(size_t j, size_t i, int from) const;
  // Whether request i may take VC `vc` of `port` (an option of it holds it, free).
  bool wants(size_t i, int port, int vc) const;
  std::vector<int> arb_;
  std::vector<int> accept_;
};

// Separable input-first: each request nominates the VC the selection gives in its first option
// with a free VC; each nominated VC goes to one nominee, round robin from the VC's pointer, which
// moves past the winner. A loser waits for the next cycle even if another VC was free.
class InputFirstVcAllocator final : public SeparableVcAllocator {
 public:
  using SeparableVcAllocator::SeparableVcAllocator;

 private:
  void match() override;
  std::vector<int> nominee_, nominee_opt_;  // per request: the VC nominated and its option
  std::vector<char> wins_;
};

// Output-first and iSLIP: every free VC grants one request that may take it (round robin from the
// VC's pointer); each request accepts one grant, the first VC number from its input VC's accept
// pointer (ties between ports, which the network never makes, in option order). A VC granted to a
// request that accepted another stays free for the cycle. The two differ in when pointers move.
class GrantAcceptVcAllocator : public SeparableVcAllocator {
 public:
  using SeparableVcAllocator::SeparableVcAllocator;

 protected:
  // After `port`'s VC `vc` granted request i, and after request i accepted it.
  virtual void on_grant(size_t i, int port, int vc) = 0;
  virtual void on_accept(size_t i, int port, int vc) = 0;

 private:
  void match() override;
  bool grants(size_t i, int port, int vc) const;
  void accept(size_t i, int& option, int& vc) const;  // the grant request i accepts (option -1: none)
  std::vector<uint64_t> granted_;  // per option: the VCs granting its request
  std::vector<int> pick_opt_, pick_vc_;
};

// Output-first: a VC's pointer moves past every request it grants; the accept pointer past the VC
// accepted.
class OutputFirstVcAllocator final : public GrantAcceptVcAllocator {
 public:
  using GrantAcceptVcAllocator::GrantAcceptVcAllocator;

 private:
  void on_grant(size_t i, int port, int vc) override;
  void on_accept(size_t i, int port, int vc) override;
};

// iSLIP: both pointers move only when a grant is accepted (one iteration).
class IslipVcAllocator final : public GrantAcceptVcAllocator {
 public:
  using GrantAcceptVcAllocator::GrantAcceptVcAllocator;

 private:
  void on_grant(size_t, int, int) override {}
  void on_accept(size_t i, int port, int vc) override;
};

// The allocators FlitParams names (sw_allocator, alloc_iters; vc_allocator, vc_select) for a router
// with `rows` switch inputs, `cols` output ports and `inputs` input VCs.
std::unique_ptr<SwitchAllocator> make_switch_allocator(const FlitParams& p, int rows, int cols);
std::unique_ptr<VcAllocator> make_vc_allocator(const FlitParams& p, int inputs, int ports);

}  // namespace ahbm
