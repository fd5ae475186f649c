#include "tools/common/thread_pool.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>

namespace einfer::tools {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield");
#endif
}

// How long an idle thread spins before it sleeps: long enough to catch the next call of a decode
// step (they come microseconds apart), short enough that a loaded board's scheduler still sees a
// thread that sleeps (a spinning thread uses up its share and is preempted mid-task, stalling
// every worker at the next join). EINFER_POOL_SPIN_US overrides it (0: sleep at once).
uint64_t spin_ns() {
  static const uint64_t ns = [] {
    const char* e = std::getenv("EINFER_POOL_SPIN_US");
    return static_cast<uint64_t>(e ? std::atol(e) : 50) * 1000;
  }();
  return ns;
}

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Spins until done() or the spin time is up; true when done() held.
template <typename F>
bool spin_until(F&& done) {
  const uint64_t start = now_ns();
  for (int i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 && now_ns() - start >= spin_ns()) return done();
  }
}

inline uint64_t gen_of(uint64_t c) {
  return c >> 32;
}
inline uint64_t count_of(uint64_t c) {
  return (c >> 16) & 0xFFFF;
}
inline uint64_t next_of(uint64_t c) {  // the next index, or the taken mask (kMaskTasks)
  return c & 0xFFFF;
}
// Calls of at most this many tasks claim them by a mask of taken indices instead of a counter.
constexpr uint64_t kMaskTasks = 16;

}  // namespace

int online_cores() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

ThreadPool::ThreadPool(int n) : n_(n < 1 ? 1 : (n > 256 ? 256 : n)) {
  for (int i = 1; i < n_; ++i) threads_.emplace_back([this, i] { worker(i); });
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

bool ThreadPool::work_on(uint64_t generation, int self) {
  bool ran = false;
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (gen_of(c) != generation) return ran;
    const uint64_t count = count_of(c);
    uint64_t index = 0, claimed = 0;
    if (count <= kMaskTasks) {
      // Task `self` first, else the lowest one left: with one task per thread, task i runs on
      // the same thread call after call.
      const uint64_t taken = next_of(c), all = (uint64_t{1} << count) - 1;
      if (taken == all) return ran;
      index = static_cast<uint64_t>(self) % count;
      if (taken >> index & 1) index = static_cast<uint64_t>(__builtin_ctzll(~taken & all));
      claimed = c | uint64_t{1} << index;
    } else {
      if (next_of(c) >= count) return ran;
      index = next_of(c);
      claimed = c + 1;
    }
    if (!claim_.compare_exchange_weak(c, claimed, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      continue;
    // Our claim keeps the call open (remaining_ > 0), so task_ and arg_ are this call's.
    task_.load(std::memory_order_relaxed)(arg_.load(std::memory_order_relaxed),
                                          static_cast<int>(index));
    if (remaining_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_sleeps_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(mu_);
      done_.notify_all();
    }
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
  work_on(generation, 0);
  // Wait for tasks still running on workers: spin briefly, then sleep (on a loaded board a spinning
  // waiter only delays the preempted worker it waits for).
  if (!spin_until([&] { return remaining_.load(std::memory_order_acquire) == 0; })) {
    std::unique_lock<std::mutex> lock(mu_);
    caller_sleeps_.store(true, std::memory_order_seq_cst);
    done_.wait(lock, [&] { return remaining_.load(std::memory_order_seq_cst) == 0; });
    caller_sleeps_.store(false, std::memory_order_seq_cst);
  }
}

void ThreadPool::worker(int self) {
  uint64_t seen = 0;
  for (;;) {
    // Spin, then sleep, until a new call (or stop) is published.
    uint64_t g = seen;
    spin_until([&] {
      g = gen_of(claim_.load(std::memory_order_acquire));
      return g != seen || stop_.load(std::memory_order_relaxed);
    });
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
    work_on(g, self);
  }
}

}  // namespace einfer::tools
