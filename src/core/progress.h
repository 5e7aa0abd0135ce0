// Progress for nonblocking collectives: one worker thread per communicator
// context that has had a nonblocking collective, running that
// communicator's queued collectives one after another in call order.
//
// Why a thread per communicator and not one per process: a Chorus collective
// runs to completion (it spins or yields on its FIFOs; it cannot be
// suspended half way and resumed later).  One process-wide thread would run
// the collectives of all communicators in one order, and MPI lets ranks
// start nonblocking collectives on *different* communicators in different
// orders (rank 0: comm A then B; rank 1: B then A): a single thread per
// process would then wait in A on rank 0 while rank 1's waits in B, until
// CHORUS_TIMEOUT.  One thread per communicator runs each communicator's
// collectives in the one order MPI guarantees for it.  Only communicators
// that use nonblocking calls get a thread.
//
// No busy thread when idle: the worker sleeps on a condition variable while
// its queue is empty; it is started on the first submission and joined
// when the context is released (MPI_Comm_free, MPIX_Comm_gpu_free,
// MPI_Finalize), after its queue has drained.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "core/common.h"

namespace chorus {

class ProgressQueue {
 public:
  using WorkFn = void (*)(void *arg);

  ProgressQueue() = default;
  ~ProgressQueue();  // drains the queue, then stops and joins the worker
  ProgressQueue(const ProgressQueue &) = delete;
  ProgressQueue &operator=(const ProgressQueue &) = delete;

  // Queue `run(arg)` behind everything submitted before; starts the worker
  // on first use.  SystemError when the thread cannot be started.
  Status submit(WorkFn run, void *arg);
  // Whether nothing is queued or running: one atomic load, for the
  // blocking collectives' check on every call.
  bool idle() const { return outstanding_.load(std::memory_order_acquire) == 0; }
  // Wait until everything submitted so far has run.  Never from the worker.
  void drain();
  // Whether the calling thread is a progress worker (of any queue).
  static bool onWorker();

 private:
  struct Work {
    WorkFn run;
    void *arg;
  };
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;     // the worker: work arrived, or stop
  std::condition_variable drained_;  // drain(): outstanding_ reached 0
  std::deque<Work> work_;
  std::atomic<int> outstanding_{0};  // queued + running
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace chorus
