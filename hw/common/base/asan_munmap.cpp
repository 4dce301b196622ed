// AddressSanitizer builds only (AHBM_SANITIZE): SystemC allocates its coroutine stacks with
// mmap and frees them with munmap, and ASan (GCC 12) does not clear the shadow of unmapped
// memory. Processes still suspended when a simulation ends leave their stack frames' redzones
// poisoned there, and the next simulation in the same process that gets the same addresses
// for its stacks reports false stack-buffer-overflows. This munmap clears the shadow first.
// The sanitizer link options force it into every executable (-Wl,--undefined=munmap), and
// libsystemc's munmap calls bind to it.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

extern "C" int munmap(void* addr, size_t length) {
  __asan_unpoison_memory_region(addr, length);
  return int(syscall(SYS_munmap, addr, length));
}
#endif
