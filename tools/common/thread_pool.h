// The tools' worker pool behind einfer_threads (runtime/threads.h): n - 1 threads plus the caller.
//
// A call publishes (generation, task count, next index) in one 64-bit word; workers and the caller
// claim task indices from it with compare-and-swap, so a worker late from an earlier call can
// never claim a task of the next one. With at most 16 tasks the word holds a mask of the taken
// ones instead, and thread t (the caller is 0) claims task t first: a task index stays on one
// core from call to call, so the rows a task owns in one parallel region (a block of tokens)
// are still in that core's cache in the next (15M q8 prefill, 2 threads: 3-4% faster than when
// whichever thread came first took task 0). Idle workers spin for a short while (a decode step
// issues dozens of small parallel calls back to back) and then sleep on a condition variable, so an
// idle pool costs no CPU. Tools only: it allocates (threads) when constructed, never in run().
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/threads.h"

namespace einfer::tools {

class ThreadPool {
 public:
  explicit ThreadPool(int n);  // n <= 1: no threads; run() executes inline
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The interface the library takes (valid while the pool lives).
  einfer_threads threads();
  int size() const { return n_; }

 private:
  static void run_c(void* ctx, einfer_task_fn task, void* arg, int count);
  void run(einfer_task_fn task, void* arg, int count);
  void worker(int self);
  // Claims and runs tasks of `generation` (thread `self`: 0 the caller); false when none.
  bool work_on(uint64_t generation, int self);

  int n_;
  std::vector<std::thread> threads_;
  // generation (32 bits) | task count (16 bits) | next unclaimed index or taken mask (16 bits)
  std::atomic<uint64_t> claim_{0};
  std::atomic<einfer_task_fn> task_{nullptr};
  std::atomic<void*> arg_{nullptr};
  std::atomic<int> remaining_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> caller_sleeps_{false};
  std::mutex mu_;
  std::condition_variable wake_, done_;
};

// Online cores (the tools' default --threads), at least 1.
int online_cores();

}  // namespace einfer::tools
