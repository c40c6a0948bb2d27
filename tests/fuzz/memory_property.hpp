#pragma once

// The fuzz targets' memory property: the heap one input makes the parser hold at its peak is
// bounded by a constant times the input's size plus a constant, or the input is a crash
// (abort(), so libFuzzer keeps it as an artifact). Measured with the sanitizer allocator's
// malloc/free hooks (live bytes requested, redzones and quarantine not counted), so the figure
// is the parser's own, not ASan's; run.sh's -rss_limit_mb backs it up on the whole process.

#include <sanitizer/allocator_interface.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace flytecd::fuzz {

class HeapPeak {
 public:
  // Call from LLVMFuzzerInitialize (the main thread, before any other).
  static void install() { __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free); }

  // Measures from here: the live bytes allocated since, and their peak.
  static void start() {
    s_live.store(0, std::memory_order_relaxed);
    s_peak.store(0, std::memory_order_relaxed);
    s_on.store(true, std::memory_order_relaxed);
  }

  // Stops measuring; aborts if the peak exceeded per_byte * input + fixed.
  static void check(size_t input, uint64_t per_byte, uint64_t fixed, const char* what) {
    s_on.store(false, std::memory_order_relaxed);
    const int64_t peak = s_peak.load(std::memory_order_relaxed);
    const uint64_t bound = per_byte * input + fixed;
    if (peak > 0 && static_cast<uint64_t>(peak) > bound) {
      std::fprintf(
          stderr,
          "memory property: %s held %lld bytes of heap at its peak for an input of %zu "
          "bytes, more than %llu (%llu per byte + %llu)\n",
          what, static_cast<long long>(peak), input, static_cast<unsigned long long>(bound),
          static_cast<unsigned long long>(per_byte), static_cast<unsigned long long>(fixed));
      std::abort();
    }
  }

 private:
  static void on_malloc(const volatile void*, size_t size) {
    if (!s_on.load(std::memory_order_relaxed)) return;
    const int64_t live = s_live.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed) +
                         static_cast<int64_t>(size);
    int64_t peak = s_peak.load(std::memory_order_relaxed);
    while (live > peak && !s_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
    }
  }
  static void on_free(const volatile void* p) {
    if (p == nullptr || !s_on.load(std::memory_order_relaxed)) return;
    if (__sanitizer_get_ownership(p) == 0) return;
    // Memory allocated before start() makes `live` go below zero: the peak is then a lower
    // bound of the growth, never a false alarm.
    s_live.fetch_sub(static_cast<int64_t>(__sanitizer_get_allocated_size(p)),
                     std::memory_order_relaxed);
  }

  static inline std::atomic<bool> s_on{false};
  static inline std::atomic<int64_t> s_live{0};
  static inline std::atomic<int64_t> s_peak{0};
};

}  // namespace flytecd::fuzz
