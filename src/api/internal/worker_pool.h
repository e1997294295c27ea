// A bounded pool of threads that run blocking tasks (HTTP handlers, the authentication hook)
// for the server's event loops. Threads start as tasks arrive, up to `max_threads`; beyond
// that tasks queue in order. No thread starts before the first task, so a server that
// answers nothing costs no pool thread.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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

  // Runs what is queued, then joins every thread. Idempotent. Must not be called from a
  // pool thread.
  void Stop();

  size_t threads() const;
  size_t running() const;  // tasks being run now

 private:
  void Run();

  const size_t max_threads_;
  const std::function<void()> on_start_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  std::vector<std::thread> threads_;         // guarded by mu_
  size_t idle_ = 0;                          // guarded by mu_
  size_t running_ = 0;                       // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
};

}  // namespace corral::api::internal
