#include "api/internal/worker_pool.h"

#include <exception>

#include "core/log.h"

namespace corral::api::internal {

WorkerPool::WorkerPool(size_t max_threads, std::function<void()> on_start)
    : max_threads_(max_threads == 0 ? 1 : max_threads), on_start_(std::move(on_start)) {}

WorkerPool::~WorkerPool() { Stop(); }

void WorkerPool::Submit(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  queue_.push_back(std::move(task));
  if (idle_ >= queue_.size() || threads_.size() >= max_threads_) {
    cv_.notify_one();
    return;
  }
  try {
    threads_.emplace_back([this] { Run(); });
  } catch (const std::exception& e) {  // std::system_error: no more threads
    CORRAL_LOG(Warn) << "http server: cannot start a handler thread: " << e.what();
    cv_.notify_one();
  }
}

void WorkerPool::Run() {
  if (on_start_) on_start_();
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    ++idle_;
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping, nothing left
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    task();
    task = nullptr;  // destroy what it captured outside the lock
    lock.lock();
    --running_;
  }
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

size_t WorkerPool::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_.size();
}

size_t WorkerPool::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

}  // namespace corral::api::internal
