// ucx transport: progress while no collective runs (one thread per process).
//
// Between two collectives nothing else makes a rank's UCX worker progress,
// and some of what peers need from it needs its CPU: the acknowledgement
// of a put over tcp (UCX's tcp transport, and its emulation of RMA over
// active messages, acknowledge in software), a credit a peer asks for, the
// rest of a message UCX could not hand to the socket at once.  A peer that
// waits for one of those while this rank computes, or sits in MPI, waited
// until this rank's next collective, or CHORUS_TIMEOUT.
//
// So one thread per process serves the process's one worker (ucx_worker.cc,
// shared by every communicator that crosses nodes) while no collective
// runs: it runs while at least one communicator is attached (from the end
// of its set-up to its teardown).  Every call on the worker happens under
// the worker lock; this thread only try_locks it, and leaves the worker to
// the collectives' threads, which progress it anyway, while any collective
// runs in the process (NetOps::enter to leave, counted here) and for a
// short grace after the last ended (kIdleGraceNs).  Serving, it runs the
// handlers of every communicator not owned by a thread (ucxMayTouch), sends
// what they left to send, and frees every communicator's finished sends.
//
// The thread sleeps in epoll on the worker's event descriptor
// (ucp_worker_get_efd), armed (ucp_worker_arm) after each service: an
// arrival wakes it.  One-shot, so that a worker busy in a collective, whose
// descriptor fires while the collective's thread drains it, does not wake
// the thread at every arrival; while collectives run it is retried every
// kBusyRetryMs instead.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/log.h"
#include "transport/ucx/ucx_state.h"

namespace chorus {

namespace {

constexpr int kBusyRetryMs = 2;
// A collective that ended this recently is likely followed at once by
// another from the same thread (a loop of collectives): taking the worker
// lock then would make that call wait for this thread, a whole timeslice
// when the ranks outnumber the cores.
constexpr int64_t kIdleGraceNs = 500000;
// Rounds of progress per service: bounded, so that a collective's thread,
// should one start now, waits little for the lock.
constexpr int kServiceRounds = 4;

int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct ProgressThread {
  // `life` orders the thread's start and stop (attach, detach), so that a
  // stopping thread is joined before another starts; `mutex` guards the
  // fields below, never held while the worker is served.
  std::mutex life;
  std::mutex mutex;
  int attached = 0;  // communicators from the end of their set-up to their teardown
  int epfd = -1;
  int wake = -1;     // eventfd: attached, a collective left work, or the thread must stop
  int efd = -1;      // the worker's event descriptor, watched while the thread runs
  bool stop = false;
  std::thread thread;
  std::atomic<int> collectives{0};    // running in the process (NetOps::enter to leave)
  std::atomic<int64_t> idleSince{0};  // CLOCK_MONOTONIC ns at the end of the last one
};

// Never destroyed: a process may exit with communicators never freed, and a
// joinable std::thread destroyed at exit would terminate it.
ProgressThread &progressThread() {
  static ProgressThread *t = new ProgressThread;
  return *t;
}

// One wake-up per arming: a worker whose collective thread drains it
// would otherwise wake this thread at every arrival, taking the core from
// the ranks when they outnumber the cores.
constexpr uint32_t kWatchEvents = EPOLLIN | EPOLLET | EPOLLONESHOT;

void watch(ProgressThread &t, int efd, int op) {
  epoll_event ev = {};
  ev.events = kWatchEvents;
  ev.data.fd = efd;
  epoll_ctl(t.epfd, op, efd, &ev);
}

// True when the worker is armed: the next arrival wakes the thread.  Only
// when no collective runs and the worker lock is free at once.
bool serve() {
  std::unique_lock<std::recursive_mutex> lock(ucxWorkerLock(), std::try_to_lock);
  if (!lock.owns_lock()) return false;
  ucp_worker_h worker = nullptr;
  for (int round = 0; round < kServiceRounds; ++round) {
    ucxServeWorker();
    worker = ucxSharedWorker();
    if (!worker) return false;
    const ucs_status_t armed = ucp_worker_arm(worker);
    if (armed == UCS_OK) return true;
    if (armed != UCS_ERR_BUSY) return false;  // (no wake-up support: retried on the timer)
  }
  return false;
}

void run(ProgressThread &t, int efd) {
  epoll_event events[4];
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(t.mutex);
      if (t.stop) return;
    }
    bool retry = true;  // in a collective, which progresses the worker, or just out of one
    if (t.collectives.load(std::memory_order_relaxed) == 0 &&
        monotonicNs() - t.idleSince.load(std::memory_order_relaxed) >= kIdleGraceNs && serve()) {
      watch(t, efd, EPOLL_CTL_MOD);
      retry = false;
    }
    const int n = epoll_wait(t.epfd, events, 4, retry ? kBusyRetryMs : -1);
    for (int i = 0; i < n; ++i)
      if (events[i].data.fd == t.wake) {
        uint64_t count;
        if (read(t.wake, &count, sizeof count) < 0) {
        }
      }
  }
}

void poke(ProgressThread &t) {
  const uint64_t one = 1;
  if (write(t.wake, &one, sizeof one) < 0) {
  }
}

}  // namespace

Status ucxProgressAttach(UcxState &st) {
  ProgressThread &t = progressThread();
  std::lock_guard<std::mutex> lifeLock(t.life);
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.epfd < 0) {
    t.epfd = epoll_create1(EPOLL_CLOEXEC);
    t.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev = {};
    ev.events = EPOLLIN;
    ev.data.fd = t.wake;
    if (t.epfd < 0 || t.wake < 0 || epoll_ctl(t.epfd, EPOLL_CTL_ADD, t.wake, &ev) != 0) {
      CHORUS_WARN("rank %d: no epoll for the UCX progress thread (%s): the worker makes progress only inside "
                  "Chorus's calls", st.ctx->rank, strerror(errno));
      if (t.epfd >= 0) close(t.epfd);
      if (t.wake >= 0) close(t.wake);
      t.epfd = t.wake = -1;
      return Status::Ok;
    }
  }
  if (t.attached == 0) {
    int efd = -1;
    ucs_status_t s;
    {
      std::lock_guard<std::recursive_mutex> workerLock(ucxWorkerLock());
      s = ucp_worker_get_efd(st.worker, &efd);
    }
    if (s != UCS_OK) {
      CHORUS_WARN("rank %d: no event descriptor for the UCX worker (%s): it makes progress only inside Chorus's "
                  "calls", st.ctx->rank, ucs_status_string(s));
      return Status::Ok;
    }
    epoll_event ev = {};
    ev.events = kWatchEvents;
    ev.data.fd = efd;
    if (epoll_ctl(t.epfd, EPOLL_CTL_ADD, efd, &ev) != 0) {
      CHORUS_WARN("rank %d: could not watch the UCX worker's events (%s): it makes progress only inside Chorus's "
                  "calls", st.ctx->rank, strerror(errno));
      return Status::Ok;
    }
    t.efd = efd;
    t.stop = false;
    t.thread = std::thread([&t, efd] { run(t, efd); });
  }
  ++t.attached;
  st.progressAttached = true;
  poke(t);  // serve and arm at once
  return Status::Ok;
}

void ucxProgressWake() {
  ProgressThread &t = progressThread();
  if (t.wake >= 0) poke(t);
}

void ucxProgressCollectiveStarts() { progressThread().collectives.fetch_add(1, std::memory_order_relaxed); }

void ucxProgressCollectiveEnds() {
  ProgressThread &t = progressThread();
  t.idleSince.store(monotonicNs(), std::memory_order_relaxed);
  t.collectives.fetch_sub(1, std::memory_order_relaxed);
}

void ucxProgressDetach(UcxState &st) {
  ProgressThread &t = progressThread();
  std::lock_guard<std::mutex> lifeLock(t.life);
  std::thread finished;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    if (!st.progressAttached) return;
    st.progressAttached = false;
    if (--t.attached == 0) {
      epoll_ctl(t.epfd, EPOLL_CTL_DEL, t.efd, nullptr);
      t.efd = -1;
      t.stop = true;
      finished = std::move(t.thread);
      poke(t);
    }
  }
  // (The thread only try_locks the worker lock: joining it never waits
  // for a caller that holds it.)
  if (finished.joinable()) finished.join();
}

}  // namespace chorus
