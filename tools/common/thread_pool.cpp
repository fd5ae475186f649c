#include "tools/common/thread_pool.h"

#include <unistd.h>

namespace einfer::tools {

namespace {

constexpr int kSpinRounds = 1 << 14;  // about 0.1-1 ms of pause instructions before sleeping

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield");
#endif
}

inline uint64_t gen_of(uint64_t c) {
  return c >> 32;
}
inline uint64_t count_of(uint64_t c) {
  return (c >> 16) & 0xFFFF;
}
inline uint64_t next_of(uint64_t c) {
  return c & 0xFFFF;
}

}  // namespace

int online_cores() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

ThreadPool::ThreadPool(int n) : n_(n < 1 ? 1 : (n > 256 ? 256 : n)) {
  for (int i = 1; i < n_; ++i) threads_.emplace_back([this] { worker(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

einfer_threads ThreadPool::threads() {
  return einfer_threads{this, n_, n_ > 1 ? &ThreadPool::run_c : nullptr};
}

void ThreadPool::run_c(void* ctx, einfer_task_fn task, void* arg, int count) {
  static_cast<ThreadPool*>(ctx)->run(task, arg, count);
}

bool ThreadPool::work_on(uint64_t generation) {
  bool ran = false;
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (gen_of(c) != generation || next_of(c) >= count_of(c)) return ran;
    if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      continue;
    // Our claim keeps the call open (remaining_ > 0), so task_ and arg_ are this call's.
    task_.load(std::memory_order_relaxed)(arg_.load(std::memory_order_relaxed),
                                          static_cast<int>(next_of(c)));
    remaining_.fetch_sub(1, std::memory_order_acq_rel);
    ran = true;
    c = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::run(einfer_task_fn task, void* arg, int count) {
  if (count <= 0) return;
  if (n_ <= 1 || count == 1) {
    for (int i = 0; i < count; ++i) task(arg, i);
    return;
  }
  task_.store(task, std::memory_order_relaxed);
  arg_.store(arg, std::memory_order_relaxed);
  remaining_.store(count, std::memory_order_relaxed);
  const uint64_t generation = gen_of(claim_.load(std::memory_order_relaxed)) + 1;
  claim_.store((generation << 32) | (static_cast<uint64_t>(count) << 16),
               std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    wake_.notify_all();
  }
  work_on(generation);
  for (int spins = 0; remaining_.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < kSpinRounds)
      cpu_relax();
    else
      std::this_thread::yield();
  }
}

void ThreadPool::worker() {
  uint64_t seen = 0;
  for (;;) {
    // Spin, then sleep, until a new call (or stop) is published.
    uint64_t g = gen_of(claim_.load(std::memory_order_acquire));
    for (int spins = 0; g == seen && spins < kSpinRounds && !stop_.load(); ++spins) {
      cpu_relax();
      g = gen_of(claim_.load(std::memory_order_acquire));
    }
    if (g == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(lock, [&] {
        return stop_.load() || gen_of(claim_.load(std::memory_order_seq_cst)) != seen;
      });
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      g = gen_of(claim_.load(std::memory_order_acquire));
    }
    if (stop_.load()) return;
    seen = g;
    work_on(g);
  }
}

}  // namespace einfer::tools
