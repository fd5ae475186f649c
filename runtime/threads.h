/* Worker interface: how a caller lends its threads to the library.
 *
 * The library never creates a thread. A caller that wants a call spread over several cores hands
 * in an einfer_threads: `run(ctx, task, arg, count)` must call task(arg, i) exactly once for every
 * i in [0, count), on any of its n workers (the calling thread may be one of them), and return only
 * when all calls have returned. count is never larger than n. An RTOS maps it onto its tasks, the
 * tools onto a small thread pool (tools/common/thread_pool.h).
 *
 * n <= 1 or run == NULL: everything runs on the calling thread, exactly as without threads.
 * Work is split so that no floating-point sum is ever divided between tasks: results are
 * bit-identical for every n. Task i uses scratch slot i, so the arena holds n slots.
 * C-compatible (included by models/einfer.h).
 */
#ifndef EINFER_RUNTIME_THREADS_H
#define EINFER_RUNTIME_THREADS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*einfer_task_fn)(void* arg, int index);

typedef struct einfer_threads {
  void* ctx; /* the caller's pool, passed back to run */
  int n;     /* workers run may use at once (also sizes the per-thread scratch) */
  void (*run)(void* ctx, einfer_task_fn task, void* arg, int count);
} einfer_threads;

#ifdef __cplusplus
}

namespace einfer {

using Threads = einfer_threads;

// Workers a call may use: 1 without a pool.
inline int thread_count(const Threads* t) {
  return t != nullptr && t->run != nullptr && t->n > 1 ? t->n : 1;
}

// Runs body(i) for i in [0, count): through the pool when there is one and count > 1, else inline.
template <typename F>
void run_tasks(const Threads* t, int count, F& body) {
  if (count <= 0) return;
  if (count == 1 || thread_count(t) == 1) {
    for (int i = 0; i < count; ++i) body(i);
    return;
  }
  t->run(
      t->ctx, [](void* arg, int i) { (*static_cast<F*>(arg))(i); }, &body, count);
}

// Task `task` of `tasks` gets [*begin, *end) of [0, total), cut on multiples of `align` (the last
// range takes the remainder), so every task but the last sees whole tiles.
inline void split_range(long long total, int task, int tasks, long long align, long long* begin,
                        long long* end) {
  const long long units = (total + align - 1) / align;
  const long long b = units * task / tasks * align, e = units * (task + 1) / tasks * align;
  *begin = b < total ? b : total;
  *end = e < total ? e : total;
}

}  // namespace einfer
#endif

#endif /* EINFER_RUNTIME_THREADS_H */
