#include "api/internal/worker_pool.h"

#include <exception>

#include "core/clock.h"
#include "core/log.h"

namespace corral::api::internal {

WorkerPool::WorkerPool(size_t max_threads, std::function<void()> on_start)
    : max_threads_(max_threads == 0 ? 1 : max_threads), on_start_(std::move(on_start)) {}

WorkerPool::~WorkerPool() { Stop(); }

namespace {
constexpr Duration kSpawnAfterWait = std::chrono::milliseconds(1);
MonoTime Now() { return SystemClock::Get().MonotonicNow(); }
}  // namespace

void WorkerPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    queue_.push_back({std::move(task), Now()});
    if (idle_ == 0) {
      if (starting_ == 0) StartThread();
      return;
    }
    --idle_;  // claimed for this task: the next one does not count on it
    ++wakeups_;
  }
  cv_.notify_one();  // outside the lock, so that the woken thread does not wait for it
}

void WorkerPool::StartThread() {
  if (threads_.size() >= max_threads_) return;
  try {
    threads_.emplace_back([this] { Run(); });
    ++starting_;
  } catch (const std::exception& e) {  // std::system_error: no more threads
    CORRAL_LOG(Warn) << "http server: cannot start a handler thread: " << e.what();
  }
}

void WorkerPool::Run() {
  if (on_start_) on_start_();
  std::unique_lock<std::mutex> lock(mu_);
  --starting_;
  while (true) {
    if (queue_.empty()) {
      if (stopping_) return;
      ++idle_;
      cv_.wait(lock, [this] { return wakeups_ > 0 || stopping_; });
      if (wakeups_ > 0) {
        --wakeups_;
      } else {
        --idle_;
      }
      continue;
    }
    Task task = std::move(queue_.front());
    queue_.pop_front();
    if (!queue_.empty() && idle_ == 0 && starting_ == 0 &&
        Now() - queue_.front().queued > kSpawnAfterWait) {
      StartThread();  // the queue is not keeping up (or its threads block)
    }
    ++running_;
    lock.unlock();
    task.run();
    task.run = nullptr;  // destroy what it captured outside the lock
    lock.lock();
    --running_;
  }
}

bool WorkerPool::Poke() {
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.empty() || stopping_) return false;
  if (idle_ == 0 && starting_ == 0 && Now() - queue_.front().queued > kSpawnAfterWait) {
    StartThread();
  }
  return true;
}

void WorkerPool::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (std::thread& t : threads) t.join();
}

bool WorkerPool::Backlogged() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !queue_.empty();
}

size_t WorkerPool::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_.size();
}

size_t WorkerPool::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

}  // namespace corral::api::internal
