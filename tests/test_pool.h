// A minimal worker pool for the tests (mutex + condition variables), written here so the threaded
// tests do not depend on the tools' pool: it implements the einfer_threads contract of
// runtime/threads.h. The calling thread only waits: its n workers run every task, so
// remote_tasks() > 0 proves the work left the calling thread. run() allocates nothing (the
// workers are started in the constructor).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/threads.h"

namespace einfer_test {

class TestPool {
 public:
  explicit TestPool(int n) : n_(n) {
    for (int i = 0; i < n; ++i) workers_.emplace_back([this] { worker(); });
  }
  ~TestPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  TestPool(const TestPool&) = delete;
  TestPool& operator=(const TestPool&) = delete;

  einfer_threads threads() { return einfer_threads{this, n_, &TestPool::run_c}; }
  long remote_tasks() const { return remote_.load(); }

 private:
  static void run_c(void* ctx, einfer_task_fn task, void* arg, int count) {
    static_cast<TestPool*>(ctx)->run(task, arg, count);
  }
  void run(einfer_task_fn task, void* arg, int count) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      task_ = task;
      arg_ = arg;
      count_ = count;
      next_ = 0;
      pending_ = count;
      ++generation_;
    }
    wake_.notify_all();
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }
  void work() {
    for (;;) {
      einfer_task_fn task;
      void* arg;
      int i;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (next_ >= count_) return;
        i = next_++;
        task = task_;
        arg = arg_;
      }
      task(arg, i);
      remote_.fetch_add(1);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_all();
    }
  }
  void worker() {
    unsigned long seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
      }
      work();
    }
  }

  int n_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  einfer_task_fn task_ = nullptr;
  void* arg_ = nullptr;
  int count_ = 0, next_ = 0, pending_ = 0;
  unsigned long generation_ = 0;
  bool stop_ = false;
  std::atomic<long> remote_{0};
};

}  // namespace einfer_test
