#pragma once
// An allocator for the few containers that grow to tens or hundreds of MB in a long run (the
// latency spans of every step). Above 2 MiB it maps the memory itself, aligned to 2 MiB and
// advised for transparent huge pages (MADV_HUGEPAGE), so the kernel faults the buffer in 2 MiB at
// a time instead of 4 KiB: on a virtual machine, where every page fault traps to the hypervisor,
// the LLaMA-8B-sized timing-only run took 67,000 faults for its spans and spent ~25% of its time
// in them (docs/performance.md). Where the kernel gives no huge pages (THP "never") the advice is
// ignored and the memory is ordinary. Below 2 MiB it is operator new, as std::allocator.
// Stateless: every instance is interchangeable.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace ahbm {

namespace huge_pages {
constexpr std::size_t kSize = std::size_t(2) << 20;
inline std::size_t mapped_bytes(std::size_t bytes) { return (bytes + kSize - 1) / kSize * kSize; }

// `bytes` (≥ kSize) rounded up to whole huge pages, at a 2 MiB boundary: a larger region is
// mapped and the unaligned head and tail are returned.
inline void* map(std::size_t bytes) {
  const std::size_t want = mapped_bytes(bytes);
  void* p = ::mmap(nullptr, want + kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t aligned = (base + kSize - 1) / kSize * kSize;
  if (aligned > base) ::munmap(p, aligned - base);
  const std::size_t tail = base + want + kSize - (aligned + want);
  if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + want), tail);
  ::madvise(reinterpret_cast<void*>(aligned), want, MADV_HUGEPAGE);  // advice only: no error to handle
  return reinterpret_cast<void*>(aligned);
}
inline void unmap(void* p, std::size_t bytes) { ::munmap(p, mapped_bytes(bytes)); }
}  // namespace huge_pages

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < huge_pages::kSize) return static_cast<T*>(::operator new(bytes));
    return static_cast<T*>(huge_pages::map(bytes));
  }
  void deallocate(T* p, std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < huge_pages::kSize) ::operator delete(p);
    else huge_pages::unmap(p, bytes);
  }
};
template <class T, class U>
bool operator==(const HugePageAllocator<T>&, const HugePageAllocator<U>&) { return true; }
template <class T, class U>
bool operator!=(const HugePageAllocator<T>&, const HugePageAllocator<U>&) { return false; }

}  // namespace ahbm
