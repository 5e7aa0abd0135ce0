#include "core/progress.h"

#include <system_error>

#include "core/log.h"

namespace chorus {

namespace {
thread_local bool t_onWorker = false;
}

bool ProgressQueue::onWorker() { return t_onWorker; }

ProgressQueue::~ProgressQueue() {
  drain();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (worker_.joinable()) worker_.join();
}

Status ProgressQueue::submit(WorkFn run, void *arg) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!worker_.joinable()) {
    try {
      worker_ = std::thread([this] { loop(); });
    } catch (const std::system_error &e) {  // no exception crosses into the C API
      CHORUS_WARN("cannot start the progress thread of nonblocking collectives: %s", e.what());
      return Status::SystemError;
    }
  }
  work_.push_back({run, arg});
  outstanding_.fetch_add(1, std::memory_order_acq_rel);
  wake_.notify_one();
  return Status::Ok;
}

void ProgressQueue::drain() {
  if (idle()) return;
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [this] { return outstanding_.load(std::memory_order_acquire) == 0; });
}

void ProgressQueue::loop() {
  t_onWorker = true;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !work_.empty(); });
    if (work_.empty()) return;  // stop_, and nothing left
    const Work w = work_.front();
    work_.pop_front();
    lock.unlock();
    w.run(w.arg);  // the collective, then MPI_Grequest_complete: no lock held
    lock.lock();
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) drained_.notify_all();
  }
}

}  // namespace chorus
