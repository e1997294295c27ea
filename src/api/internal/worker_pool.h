// A bounded pool of threads that run blocking tasks (HTTP handlers, the authentication hook)
// for the server's event loops. Threads start as needed, up to `max_threads`; beyond that
// tasks queue in order. A task that finds no idle thread starts one (unless one is starting
// already), and a thread that takes a task while the next one has waited over a millisecond
// starts another, and so does `Poke()` (the event loops call it while tasks wait): handlers
// that block never leave queued work without a thread for long, while a burst of quick tasks
// does not start a thread per task. No thread starts before the first task.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/time.h"

namespace corral::api::internal {

class WorkerPool {
 public:
  // `on_start` runs first on every pool thread (marks it as the server's).
  WorkerPool(size_t max_threads, std::function<void()> on_start);
  ~WorkerPool();  // Stop()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; starts a thread when none is idle and fewer than `max_threads` run.
  // After Stop() the task is dropped.
  void Submit(std::function<void()> task);

  // Starts a thread when the oldest queued task has waited over a millisecond and no thread
  // is idle or starting. Returns whether tasks are waiting (call again soon).
  bool Poke();

  // Runs what is queued, then joins every thread. Idempotent. Must not be called from a
  // pool thread.
  void Stop();

  // True when tasks wait for a thread (a thread should not linger on optional work).
  bool Backlogged() const;

  size_t threads() const;
  size_t running() const;  // tasks being run now

 private:
  struct Task {
    std::function<void()> run;
    MonoTime queued;
  };
  void Run();
  void StartThread();  // requires mu_

  const size_t max_threads_;
  const std::function<void()> on_start_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;            // guarded by mu_
  std::vector<std::thread> threads_;  // guarded by mu_
  size_t idle_ = 0;                   // guarded by mu_: waiting threads not yet woken for a task
  size_t wakeups_ = 0;                // guarded by mu_: woken for a task, not yet running
  size_t starting_ = 0;               // guarded by mu_: started, not yet taking tasks
  size_t running_ = 0;                // guarded by mu_
  bool stopping_ = false;             // guarded by mu_
};

}  // namespace corral::api::internal
