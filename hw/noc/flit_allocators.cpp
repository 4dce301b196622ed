#include "hw/noc/flit_allocators.h"

#include <algorithm>
#include <stdexcept>

#include "hw/noc/flit_network.h"

namespace ahbm {

// ---- switch allocation ----

SwitchAllocator::SwitchAllocator(int rows, int cols)
    : rows_(rows), cols_(cols), by_row_(size_t(rows)), first_(size_t(rows * cols), -1),
      col_row_(size_t(cols), -1), row_label_(size_t(rows), -1) {
  if (rows < 0 || cols < 0) throw std::invalid_argument("SwitchAllocator: negative size");
}

void SwitchAllocator::clear() {
  for (auto& r : by_row_) r.clear();
  first_.assign(first_.size(), -1);
  col_row_.assign(col_row_.size(), -1);
  row_label_.assign(row_label_.size(), -1);
  any_ = false;
}

void SwitchAllocator::grant(int row, int col, int label) {
  col_row_[size_t(col)] = row;
  row_label_[size_t(row)] = label;
}

int SwitchAllocator::first_label(int row) const {
  for (const Request& q : requests_of(row))
    if (col_free(q.col)) return q.label;
  return -1;
}

void SwitchAllocator::replicate() {
  // (Greedy and input-first need not: they give a label every free column it asked for.)
  for (int row = 0; row < rows_; ++row) {
    const int label = row_label_[size_t(row)];
    if (label < 0) continue;
    for (const Request& q : requests_of(row))
      if (q.label == label && col_free(q.col)) col_row_[size_t(q.col)] = row;
  }
}

void GreedySwitchAllocator::match() {
  start_ = rr_;
  bool any = false;
  for (int k = 0; k < rows(); ++k) {
    const int row = (start_ + k) % rows();
    const int label = first_label(row);
    if (label < 0) continue;
    for (const Request& q : requests_of(row))
      if (q.label == label && col_free(q.col)) grant(row, q.col, label);
    any = true;
  }
  if (any) rr_ = (rr_ + 1) % rows();
}

InputFirstSwitchAllocator::InputFirstSwitchAllocator(int rows, int cols, int iterations)
    : SwitchAllocator(rows, cols), iterations_(iterations), arb_(size_t(cols), 0) {}

void InputFirstSwitchAllocator::match() {
  for (int it = 0; it < iterations_ && iterate(); ++it) {
  }
  // A column's pointer moves past the row it went to (every grant is a flit sent).
  for (int col = 0; col < cols(); ++col)
    if (!col_free(col)) arb_[size_t(col)] = (row_of(col) + 1) % rows();
}

bool InputFirstSwitchAllocator::iterate() {
  bid_.assign(size_t(cols()), -1);
  nominee_.assign(size_t(rows()), -1);
  for (int row = 0; row < rows(); ++row) {
    if (!row_free(row)) continue;
    const int label = first_label(row);
    nominee_[size_t(row)] = label;
    if (label < 0) continue;
    for (const Request& q : requests_of(row)) {
      if (q.label != label || !col_free(q.col)) continue;
      int& b = bid_[size_t(q.col)];
      const int from = arb_[size_t(q.col)];
      if (b < 0 || rank(row, from, rows()) < rank(b, from, rows())) b = row;
    }
  }
  bool progress = false;
  for (int col = 0; col < cols(); ++col) {
    const int row = bid_[size_t(col)];
    if (row < 0) continue;
    grant(row, col, nominee_[size_t(row)]);
    progress = true;
  }
  return progress;
}

GrantAcceptSwitchAllocator::GrantAcceptSwitchAllocator(int rows, int cols, int iterations)
    : SwitchAllocator(rows, cols), arb_(size_t(cols), 0), accept_(size_t(rows), 0), iterations_(iterations) {}

void GrantAcceptSwitchAllocator::match() {
  for (int it = 0; it < iterations_ && iterate(it); ++it) {
  }
  replicate();
}

bool GrantAcceptSwitchAllocator::iterate(int iteration) {
  granted_.assign(size_t(cols()), -1);
  for (int col = 0; col < cols(); ++col) {
    if (!col_free(col)) continue;
    int& g = granted_[size_t(col)];
    const int from = arb_[size_t(col)];
    for (int row = 0; row < rows(); ++row)
      if (row_free(row) && request(row, col) >= 0 && (g < 0 || rank(row, from, rows()) < rank(g, from, rows())))
        g = row;
    if (g >= 0) on_grant(col, g);
  }
  bool progress = false;
  for (int row = 0; row < rows(); ++row) {
    if (!row_free(row)) continue;
    const int from = accept_[size_t(row)];
    int best = -1;
    for (int col = 0; col < cols(); ++col)
      if (granted_[size_t(col)] == row && (best < 0 || rank(col, from, cols()) < rank(best, from, cols())))
        best = col;
    if (best < 0) continue;
    grant(row, best, request(row, best));
    progress = true;
    on_accept(row, best, iteration);
  }
  return progress;
}

void OutputFirstSwitchAllocator::on_grant(int col, int row) { arb_[size_t(col)] = (row + 1) % rows(); }

void OutputFirstSwitchAllocator::on_accept(int row, int col, int) { accept_[size_t(row)] = (col + 1) % cols(); }

void IslipSwitchAllocator::on_accept(int row, int col, int iteration) {
  if (iteration > 0) return;
  accept_[size_t(row)] = (col + 1) % cols();
  arb_[size_t(col)] = (row + 1) % rows();
}

void WavefrontSwitchAllocator::match() {
  const int n = std::max(rows(), cols());
  for (int d = 0; d < n; ++d) {
    const int diag = (diag_ + d) % n;
    for (int row = 0; row < rows(); ++row) {
      const int col = (diag - row % n + n) % n;
      if (col >= cols() || !row_free(row) || !col_free(col) || request(row, col) < 0) continue;
      grant(row, col, request(row, col));
    }
  }
  diag_ = (diag_ + 1) % n;
  replicate();
}

// ---- VC allocation ----

VcAllocator::VcAllocator(int inputs, int ports, int vcs, bool round_robin)
    : inputs_(inputs), vcs_(vcs), round_robin_(round_robin), next_(size_t(ports), 0) {
  if (inputs < 0 || ports < 0 || vcs < 1 || vcs > 64) throw std::invalid_argument("VcAllocator: 1 to 64 VCs per port");
}

int VcAllocator::port_of(size_t i) const {
  const int k = req_[i].option;
  return k < 0 ? -1 : opt_[size_t(k)].port;
}

bool VcAllocator::retry() const {
  bool lost = false, won = false;
  for (const Request& q : req_) (q.vc < 0 ? lost : won) = true;
  return lost && won;
}

int VcAllocator::select(const Option& o, uint64_t free) const {
  for (int k = 0; k < o.count; ++k) {
    const int v = o.first + (round_robin_ ? (next_[size_t(o.port)] + k) % o.count : k);
    if (free >> v & 1) return v;
  }
  return -1;
}

void VcAllocator::grant(size_t i, int option, int vc) {
  req_[i].option = option;
  req_[i].vc = vc;
  const Option& o = opt_[size_t(option)];
  if (round_robin_) next_[size_t(o.port)] = (vc - o.first + 1) % o.count;
}

GreedyVcAllocator::GreedyVcAllocator(int inputs, int ports, int vcs, bool round_robin)
    : VcAllocator(inputs, ports, vcs, round_robin), taken_(size_t(ports), 0) {}

void GreedyVcAllocator::match() {
  for (const Option& o : opt_) taken_[size_t(o.port)] = 0;  // only the ports asked for
  for (size_t i = 0; i < req_.size(); ++i)
    for (int k = req_[i].begin; k < req_[i].end; ++k) {
      const Option& o = opt_[size_t(k)];
      const int v = select(o, o.free & ~taken_[size_t(o.port)]);
      if (v < 0) continue;
      grant(i, k, v);
      taken_[size_t(o.port)] |= uint64_t(1) << v;
      break;
    }
}

SeparableVcAllocator::SeparableVcAllocator(int inputs, int ports, int vcs, bool round_robin)
    : VcAllocator(inputs, ports, vcs, round_robin), arb_(size_t(ports * vcs), 0), accept_(size_t(inputs), 0) {}

bool SeparableVcAllocator::before(size_t j, size_t i, int from) const {
  const int rj = (req_[j].input - from + inputs_) % inputs_, ri = (req_[i].input - from + inputs_) % inputs_;
  return rj < ri || (rj == ri && j < i);
}

bool SeparableVcAllocator::wants(size_t i, int port, int vc) const {
  for (int k = req_[i].begin; k < req_[i].end; ++k)
    if (opt_[size_t(k)].port == port && (opt_[size_t(k)].free >> vc & 1)) return true;
  return false;
}

void InputFirstVcAllocator::match() {
  const size_t n = req_.size();
  nominee_.assign(n, -1);
  nominee_opt_.assign(n, -1);
  for (size_t i = 0; i < n; ++i)
    for (int k = req_[i].begin; k < req_[i].end && nominee_[i] < 0; ++k) {
      nominee_[i] = select(opt_[size_t(k)], opt_[size_t(k)].free);
      nominee_opt_[i] = k;
    }
  // A nominee wins unless a request for the same VC comes before it at the VC's arbiter. All
  // winners are decided before any grant moves a pointer.
  wins_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (nominee_[i] < 0) continue;
    const int port = opt_[size_t(nominee_opt_[i])].port, vc = nominee_[i];
    bool first = true;
    for (size_t j = 0; j < n && first; ++j)
      if (j != i && nominee_[j] == vc && opt_[size_t(nominee_opt_[j])].port == port && before(j, i, arb(port, vc)))
        first = false;
    wins_[i] = first;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!wins_[i]) continue;
    grant(i, nominee_opt_[i], nominee_[i]);
    arb(opt_[size_t(nominee_opt_[i])].port, nominee_[i]) = (req_[i].input + 1) % inputs_;
  }
}

bool GrantAcceptVcAllocator::grants(size_t i, int port, int vc) const {
  // VC `vc` of `port` grants request i when no other request that may take it comes first.
  const int from = arb_[size_t(port * vcs_ + vc)];
  for (size_t j = 0; j < req_.size(); ++j)
    if (j != i && wants(j, port, vc) && before(j, i, from)) return false;
  return true;
}

void GrantAcceptVcAllocator::accept(size_t i, int& option, int& vc) const {
  const int from = accept_[size_t(req_[i].input)];
  option = vc = -1;
  int best = vcs_;
  for (int k = req_[i].begin; k < req_[i].end; ++k)
    for (int v = 0; v < vcs_; ++v) {
      const int r = (v - from + vcs_) % vcs_;
      if ((granted_[size_t(k)] >> v & 1) && r < best) {
        best = r;
        option = k;
        vc = v;
      }
    }
}

void GrantAcceptVcAllocator::match() {
  const size_t n = req_.size();
  granted_.assign(opt_.size(), 0);
  for (size_t i = 0; i < n; ++i)
    for (int k = req_[i].begin; k < req_[i].end; ++k) {
      const Option& o = opt_[size_t(k)];
      for (int v = o.first; v < o.first + o.count; ++v)
        if ((o.free >> v & 1) && grants(i, o.port, v)) granted_[size_t(k)] |= uint64_t(1) << v;
    }
  for (size_t i = 0; i < n; ++i)
    for (int k = req_[i].begin; k < req_[i].end; ++k)
      for (int v = 0; v < vcs_; ++v)
        if (granted_[size_t(k)] >> v & 1) on_grant(i, opt_[size_t(k)].port, v);
  // Every request accepts from its pointer as it stood at the start (two requests of one multicast
  // head read the same pointer); then the grants are taken in request order.
  pick_opt_.assign(n, -1);
  pick_vc_.assign(n, -1);
  for (size_t i = 0; i < n; ++i) accept(i, pick_opt_[i], pick_vc_[i]);
  for (size_t i = 0; i < n; ++i) {
    if (pick_vc_[i] < 0) continue;
    grant(i, pick_opt_[i], pick_vc_[i]);
    on_accept(i, opt_[size_t(pick_opt_[i])].port, pick_vc_[i]);
  }
}

void OutputFirstVcAllocator::on_grant(size_t i, int port, int vc) { arb(port, vc) = (req_[i].input + 1) % inputs_; }

void OutputFirstVcAllocator::on_accept(size_t i, int, int vc) { accept_[size_t(req_[i].input)] = (vc + 1) % vcs_; }

void IslipVcAllocator::on_accept(size_t i, int port, int vc) {
  arb(port, vc) = (req_[i].input + 1) % inputs_;
  accept_[size_t(req_[i].input)] = (vc + 1) % vcs_;
}

// ---- factories ----

std::unique_ptr<SwitchAllocator> make_switch_allocator(const FlitParams& p, int rows, int cols) {
  switch (p.sw_allocator) {
    case FlitParams::SwAllocator::kGreedy:
      return std::make_unique<GreedySwitchAllocator>(rows, cols);
    case FlitParams::SwAllocator::kInputFirst:
      return std::make_unique<InputFirstSwitchAllocator>(rows, cols, p.alloc_iters);
    case FlitParams::SwAllocator::kOutputFirst:
      return std::make_unique<OutputFirstSwitchAllocator>(rows, cols, p.alloc_iters);
    case FlitParams::SwAllocator::kIslip:
      return std::make_unique<IslipSwitchAllocator>(rows, cols, p.alloc_iters);
    case FlitParams::SwAllocator::kWavefront:
      return std::make_unique<WavefrontSwitchAllocator>(rows, cols);
  }
  throw std::invalid_argument("make_switch_allocator: unknown allocator");
}

std::unique_ptr<VcAllocator> make_vc_allocator(const FlitParams& p, int inputs, int ports) {
  const bool rr = p.vc_select == FlitParams::VcSelect::kRoundRobin;
  switch (p.vc_allocator) {
    case FlitParams::VcAllocator::kGreedy:
      return std::make_unique<GreedyVcAllocator>(inputs, ports, p.vcs, rr);
    case FlitParams::VcAllocator::kInputFirst:
      return std::make_unique<InputFirstVcAllocator>(inputs, ports, p.vcs, rr);
    case FlitParams::VcAllocator::kOutputFirst:
      return std::make_unique<OutputFirstVcAllocator>(inputs, ports, p.vcs, rr);
    case FlitParams::VcAllocator::kIslip:
      return std::make_unique<IslipVcAllocator>(inputs, ports, p.vcs, rr);
  }
  throw std::invalid_argument("make_vc_allocator: unknown allocator");
}

}  // namespace ahbm
