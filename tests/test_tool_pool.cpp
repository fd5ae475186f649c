// einfer-test: no-bare-metal (std::thread workers)
// The tools' worker pool (tools/common/thread_pool.h): every task index runs exactly once per
// call, calls never overlap (a late worker cannot run a task of the next call), a model run on it
// gives the same logits as one thread. Also built into einfer_tsan_tests (the tsan preset).
#include <doctest/doctest.h>

#if EINFER_HAVE_TOOL_COMMON

#include <atomic>
#include <vector>

#include "tools/common/thread_pool.h"

namespace {

struct Tally {
  std::vector<std::atomic<int>>* hits;
  std::atomic<int>* running;
  std::atomic<int>* overlap;
};

void count_task(void* arg, int i) {
  Tally* t = static_cast<Tally*>(arg);
  if (t->running->fetch_add(1) < 0) t->overlap->fetch_add(1);
  (*t->hits)[static_cast<size_t>(i)].fetch_add(1);
  t->running->fetch_sub(1);
}

}  // namespace

TEST_CASE("tool pool: each task once per call, calls one after another") {
  for (int n : {1, 2, 3, 4}) {
    CAPTURE(n);
    einfer::tools::ThreadPool pool(n);
    const einfer_threads t = pool.threads();
    CHECK(pool.size() == n);
    CHECK((t.run != nullptr) == (n > 1));
    for (int call = 0; call < 2000; ++call) {
      const int count = 1 + call % n;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      std::atomic<int> running{0}, overlap{0};
      Tally tally{&hits, &running, &overlap};
      if (t.run) {
        t.run(t.ctx, count_task, &tally, count);
      } else {
        for (int i = 0; i < count; ++i) count_task(&tally, i);
      }
      CHECK(running.load() == 0);  // every task had returned when run() did
      int wrong = 0;
      for (auto& h : hits) wrong += h.load() != 1;
      REQUIRE(wrong == 0);
      REQUIRE(overlap.load() == 0);
    }
  }
}

TEST_CASE("tool pool: online_cores is at least one") {
  CHECK(einfer::tools::online_cores() >= 1);
}

#endif  // EINFER_HAVE_TOOL_COMMON
