#ifndef HEARALERT_ALLOCATION_COUNTER_H
#define HEARALERT_ALLOCATION_COUNTER_H

#include <stdint.h>

/// Heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc) made by the
/// whole process since it started. Linked only into hearalert-bench, whose `malloc` and friends it replaces
/// by ELF symbol interposition (glibc supports replacing malloc this way, see "Replacing malloc" in the
/// glibc manual); each call is counted and forwarded to glibc's own allocator. Benchmarks read the count
/// before and after a stretch of real-time work to show that the audio path allocates nothing.
uint64_t hearalert_allocation_count(void);

#endif
