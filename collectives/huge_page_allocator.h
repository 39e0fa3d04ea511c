// Allocator for the program arrays. They are large (tens of bytes per operation, millions of
// operations) and written once, front to back, so the cost of generating a big program is mostly
// first-touch page faults. Allocations of 2 MiB and more are aligned to 2 MiB and marked for
// transparent huge pages, which cuts those faults by the page-size ratio wherever THP is set to
// "madvise" (the kernel ignores the hint where THP is off).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace etwire::collectives {

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: allocators convert implicitly

  T* allocate(size_t count) {
    const size_t bytes = count * sizeof(T);
    if (bytes < kHugePage) {
      return static_cast<T*>(::operator new(bytes));
    }
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* memory = std::aligned_alloc(kHugePage, rounded);
    if (memory == nullptr) throw std::bad_alloc();
    madvise(memory, rounded, MADV_HUGEPAGE);
    return static_cast<T*>(memory);
  }
  void deallocate(T* pointer, size_t count) {
    if (count * sizeof(T) < kHugePage) {
      ::operator delete(pointer);
    } else {
      std::free(pointer);
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }

 private:
  static constexpr size_t kHugePage = size_t{2} << 20;
};

}  // namespace etwire::collectives
