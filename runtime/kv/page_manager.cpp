#include "runtime/kv/page_manager.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>

#include "hw/common/base/error.h"

namespace ahbm {

KvPageManager::KvPageManager(int pes, int64_t pages_per_pe, int page_tokens, std::string capacity_note)
    : pes_(pes),
      pages_per_pe_(pages_per_pe),
      page_tokens_(page_tokens),
      capacity_note_(std::move(capacity_note)),
      free_(size_t(pes)),
      fresh_(size_t(pes), 0),
      in_use_(size_t(pes), 0),
      peak_(size_t(pes), 0) {
  if (pes < 1 || page_tokens < 1) throw std::logic_error("KvPageManager: pes and page_tokens must be positive");
}

KvPageManager::Seq& KvPageManager::seq(SeqId s) {
  if (s < 0 || size_t(s) >= seqs_.size()) throw std::logic_error("KV sequence " + std::to_string(s) + " does not exist");
  if (!seqs_[size_t(s)].live) throw std::logic_error("KV sequence " + std::to_string(s) + " was already released");
  return seqs_[size_t(s)];
}
const KvPageManager::Seq& KvPageManager::seq(SeqId s) const { return const_cast<KvPageManager*>(this)->seq(s); }

bool KvPageManager::live(SeqId s) const { return s >= 0 && size_t(s) < seqs_.size() && seqs_[size_t(s)].live; }
int32_t KvPageManager::length(SeqId s) const { return seq(s).length; }
const std::vector<PageId>& KvPageManager::table(SeqId s) const { return seq(s).table; }

int KvPageManager::checked_pe(int pe) const {
  if (pe < 0 || pe >= pes_) throw std::logic_error("placement chose PE " + std::to_string(pe) + " of " + std::to_string(pes_));
  return pe;
}

PageId KvPageManager::allocate(int pe, int32_t first_pos) {
  checked_pe(pe);
  if (!has_room(pe))
    throw InputError("KV capacity exceeded: the page pool of PE " + std::to_string(pe) + " is full (" +
                     std::to_string(pages_per_pe_) + " pages of " + std::to_string(page_tokens_) + " tokens; " +
                     std::to_string(in_use()) + " pages in use on " + std::to_string(pes_) + " PEs)" +
                     (capacity_note_.empty() ? "" : "; " + capacity_note_));
  KvPage p;
  p.pe = pe;
  auto& fl = free_[size_t(pe)];
  if (!fl.empty()) {
    p.slot = fl.back();
    fl.pop_back();
  } else {
    p.slot = fresh_[size_t(pe)]++;
  }
  p.refs = 1;
  p.first_pos = first_pos;
  p.origin.reserve(size_t(page_tokens_));
  pages_.push_back(std::move(p));
  ++allocations_;
  peak_[size_t(pe)] = std::max(peak_[size_t(pe)], ++in_use_[size_t(pe)]);
  peak_total_ = std::max(peak_total_, in_use());
  return PageId(pages_.size() - 1);
}

void KvPageManager::unref(PageId id) {
  KvPage& p = pages_[size_t(id)];
  if (p.refs <= 0) throw std::logic_error("KV page " + std::to_string(id) + " freed twice");
  if (--p.refs > 0) return;
  free_[size_t(p.pe)].push_back(p.slot);
  --in_use_[size_t(p.pe)];
  ++frees_;
}

SeqId KvPageManager::create() {
  seqs_.push_back(Seq{});
  return SeqId(seqs_.size() - 1);
}

SeqId KvPageManager::fork(SeqId parent) {
  Seq child = seq(parent);
  for (PageId p : child.table) ++pages_[size_t(p)].refs;
  seqs_.push_back(std::move(child));
  return SeqId(seqs_.size() - 1);
}

SeqId KvPageManager::fork_copy(SeqId parent, const PlacePage& place) {
  const Seq src = seq(parent);
  const SeqId child = create();
  for (PageId from : src.table) {
    const PageId to = allocate(checked_pe(place(*this, child)), pages_[size_t(from)].first_pos);
    copy_page(from, to);
    seqs_[size_t(child)].table.push_back(to);
  }
  seqs_[size_t(child)].length = src.length;
  return child;
}

void KvPageManager::append(SeqId s, int origin, int n, const PlacePage& place, bool cached) {
  if (n < 0) throw std::logic_error("append of a negative token count");
  seq(s);  // validates
  const uint64_t write = cached ? 0 : ++writes_;  // 0: before every step
  while (n > 0) {
    Seq& q = seqs_[size_t(s)];
    const bool room_in_last = !q.table.empty() && pages_[size_t(q.table.back())].filled() < page_tokens_;
    if (room_in_last && pages_[size_t(q.table.back())].refs > 1) {
      // Copy-on-write: the other tables keep the page as it is; this one gets its own copy.
      const PageId old = q.table.back();
      const PageId copy = allocate(checked_pe(place(*this, s)), pages_[size_t(old)].first_pos);
      copy_page(old, copy);
      unref(old);
      seqs_[size_t(s)].table.back() = copy;
      ++cow_copies_;
      continue;
    }
    if (!room_in_last) {
      // place() sees the table before the new page joins it: its size is the page's index.
      const PageId fresh = allocate(checked_pe(place(*this, s)), q.length);
      seqs_[size_t(s)].table.push_back(fresh);
      continue;
    }
    KvPage& last = pages_[size_t(q.table.back())];
    const int take = std::min(n, page_tokens_ - last.filled());
    last.origin.insert(last.origin.end(), size_t(take), origin);
    last.written_at.insert(last.written_at.end(), size_t(take), write);
    q.length += take;
    n -= take;
  }
}

int64_t KvPageManager::pages_for_append(SeqId s, int n) const {
  if (n <= 0) return 0;
  const Seq& q = seq(s);
  const KvPage* last = q.table.empty() ? nullptr : &pages_[size_t(q.table.back())];
  const int room = last && last->filled() < page_tokens_ ? page_tokens_ - last->filled() : 0;
  // The same walk as append(): a copy of a shared last page with room, then fresh pages.
  const int64_t copy = room > 0 && last->refs > 1 ? 1 : 0;
  const int64_t rest = std::max(0, n - room);
  return copy + (rest + page_tokens_ - 1) / page_tokens_;
}

void KvPageManager::copy_page(PageId from, PageId to) {
  const KvPage& src = pages_[size_t(from)];
  KvPage& dst = pages_[size_t(to)];
  dst.origin = src.origin;
  dst.written_at.assign(src.origin.size(), ++writes_);
  dst.copied = src.filled();
  dst.copied_from_pe = src.pe;
}

void KvPageManager::release(SeqId s) {
  Seq& q = seq(s);
  for (PageId p : q.table) unref(p);
  q.table.clear();
  q.live = false;
}

int64_t KvPageManager::in_use() const { return std::accumulate(in_use_.begin(), in_use_.end(), int64_t(0)); }

int64_t KvPageManager::shared_pages() const {
  return std::count_if(pages_.begin(), pages_.end(), [](const KvPage& p) { return p.refs > 1; });
}
int64_t KvPageManager::private_pages() const {
  return std::count_if(pages_.begin(), pages_.end(), [](const KvPage& p) { return p.refs == 1; });
}
int64_t KvPageManager::pages_saved() const {
  int64_t n = 0;
  for (const KvPage& p : pages_) n += std::max(0, p.refs - 1);
  return n;
}

void KvPageManager::check_invariants() const {
  auto fail = [](const std::string& what) { throw std::logic_error("KV page manager invariant: " + what); };
  std::vector<int> refs(pages_.size(), 0);
  for (size_t s = 0; s < seqs_.size(); ++s) {
    const Seq& q = seqs_[s];
    if (!q.live) {
      if (!q.table.empty()) fail("released sequence " + std::to_string(s) + " still holds pages");
      continue;
    }
    int32_t covered = 0;
    for (size_t i = 0; i < q.table.size(); ++i) {
      const KvPage& p = pages_[size_t(q.table[i])];
      ++refs[size_t(q.table[i])];
      if (p.first_pos != covered) fail("sequence " + std::to_string(s) + " page " + std::to_string(i) + " starts at " +
                                       std::to_string(p.first_pos) + ", expected " + std::to_string(covered));
      if (i + 1 < q.table.size() && p.filled() != page_tokens_) fail("a page before the last is not full");
      if (p.written_at.size() != p.origin.size()) fail("page " + std::to_string(q.table[i]) + " lost a write record");
      covered += p.filled();
    }
    if (covered != q.length) fail("sequence " + std::to_string(s) + " length " + std::to_string(q.length) +
                                  " but its pages hold " + std::to_string(covered) + " tokens");
  }
  std::vector<int64_t> live_on(static_cast<size_t>(pes_), 0);
  std::vector<std::set<int64_t>> live_slots(static_cast<size_t>(pes_));
  for (size_t id = 0; id < pages_.size(); ++id) {
    const KvPage& p = pages_[id];
    if (p.refs != refs[id]) fail("page " + std::to_string(id) + " refcount " + std::to_string(p.refs) + " but " +
                                 std::to_string(refs[id]) + " tables reference it");
    if (p.refs == 0) continue;
    ++live_on[size_t(p.pe)];
    if (!live_slots[size_t(p.pe)].insert(p.slot).second) fail("two live pages share a slot on PE " + std::to_string(p.pe));
  }
  for (int pe = 0; pe < pes_; ++pe) {
    if (live_on[size_t(pe)] != in_use_[size_t(pe)]) fail("PE " + std::to_string(pe) + " in-use count is wrong");
    if (pages_per_pe_ >= 0 && in_use_[size_t(pe)] > pages_per_pe_) fail("PE " + std::to_string(pe) + " over capacity");
    std::set<int64_t> all = live_slots[size_t(pe)];
    for (int64_t slot : free_[size_t(pe)])
      if (!all.insert(slot).second) fail("slot " + std::to_string(slot) + " of PE " + std::to_string(pe) +
                                         " is both free and in use (or freed twice)");
    if (int64_t(all.size()) != fresh_[size_t(pe)] || (!all.empty() && *all.rbegin() != fresh_[size_t(pe)] - 1))
      fail("PE " + std::to_string(pe) + " leaked slots: live + free != slots handed out");
  }
}

}  // namespace ahbm
