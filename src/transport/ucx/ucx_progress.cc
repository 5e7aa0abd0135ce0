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
// So one thread per process serves the workers of every communicator that
// crosses nodes while they are idle.  A collective holds its communicator's
// `busy` mutex from its start to its end (NetOps::enter/leave), and every
// UCX call of that communicator happens under it: the set-up before the
// worker is attached here, the collectives between enter and leave, this
// thread's service under a try_lock, the teardown after it is detached.
// The worker is UCS_THREAD_MODE_SERIALIZED, and the context shares its
// resources between workers with locks (mt_workers_shared): two
// communicators' workers may run at once, one here and one in a collective.
//
// The thread sleeps in epoll on the workers' event descriptors
// (ucp_worker_get_efd), armed (ucp_worker_arm) after each service: an
// arrival wakes it.  One-shot, so that a worker busy in a collective,
// whose descriptor fires while the collective thread drains it, does not
// wake the thread at every arrival; it is retried every
// kBusyRetryMs instead, until its collective ends and a short grace after
// (kIdleGraceNs).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "core/log.h"
#include "transport/ucx/ucx_state.h"

namespace chorus {

namespace {

constexpr int kBusyRetryMs = 2;
// A communicator that ended a collective this recently is left to its own
// thread, which likely calls again at once (a loop of collectives): taking
// its lock then would make that call wait for this thread, a whole
// timeslice when the ranks outnumber the cores.
constexpr int64_t kIdleGraceNs = 500000;
// Rounds of progress per service: bounded, so that the communicator's own
// thread, should it call now, waits little.
constexpr int kServiceRounds = 4;

int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Registry {
  // `life` orders the thread's start and stop (attach, detach), so that a
  // stopping thread is joined before another starts; `mutex` is held by
  // the thread while it serves, and by attach and detach.
  std::mutex life;
  std::mutex mutex;
  std::vector<UcxState *> states;
  int epfd = -1;
  int wake = -1;  // eventfd: a worker attached, or the thread must stop
  bool stop = false;
  std::thread thread;
};

// Never destroyed: a process may exit with communicators never freed, and a
// joinable std::thread destroyed at exit would terminate it.
Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}

// One wake-up per arming: a worker whose collective thread drains it
// would otherwise wake this thread at every arrival, taking the core from
// the ranks when they outnumber the cores.
constexpr uint32_t kWatchEvents = EPOLLIN | EPOLLET | EPOLLONESHOT;

void watch(Registry &r, UcxState &st) {
  epoll_event ev = {};
  ev.events = kWatchEvents;
  ev.data.ptr = &st;
  epoll_ctl(r.epfd, EPOLL_CTL_MOD, st.progressEfd, &ev);
}

// Under st.busy.  True when the worker is armed: the next arrival wakes
// the thread.
bool serve(UcxState &st) {
  for (int round = 0; round < kServiceRounds; ++round) {
    ucxProgress(&st, -1, 0, nullptr, 0);
    const ucs_status_t armed = ucp_worker_arm(st.worker);
    if (armed == UCS_OK) return true;
    if (armed != UCS_ERR_BUSY) return false;  // (no wake-up support: retried on the timer)
  }
  return false;
}

void run(Registry &r) {
  epoll_event events[16];
  for (;;) {
    bool retry = false;
    {
      std::lock_guard<std::mutex> lock(r.mutex);
      if (r.stop) return;
      const int64_t now = monotonicNs();
      for (UcxState *st : r.states) {
        if (now - st->idleSince.load(std::memory_order_relaxed) < kIdleGraceNs || !st->busy.try_lock()) {
          retry = true;  // in a collective, which progresses it, or just out of one
          continue;
        }
        if (serve(*st)) watch(r, *st);
        else retry = true;
        st->busy.unlock();
      }
    }
    const int n = epoll_wait(r.epfd, events, 16, retry ? kBusyRetryMs : -1);
    for (int i = 0; i < n; ++i)
      if (events[i].data.ptr == nullptr) {
        uint64_t count;
        if (read(r.wake, &count, sizeof count) < 0) {
        }
      }
  }
}

void poke(Registry &r) {
  const uint64_t one = 1;
  if (write(r.wake, &one, sizeof one) < 0) {
  }
}

}  // namespace

Status ucxProgressAttach(UcxState &st) {
  Registry &r = registry();
  int efd = -1;
  const ucs_status_t s = ucp_worker_get_efd(st.worker, &efd);
  if (s != UCS_OK) {
    CHORUS_WARN("rank %d: no event descriptor for the UCX worker (%s): it makes progress only inside collectives",
                st.ctx->rank, ucs_status_string(s));
    return Status::Ok;
  }
  std::lock_guard<std::mutex> lifeLock(r.life);
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.epfd < 0) {
    r.epfd = epoll_create1(EPOLL_CLOEXEC);
    r.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev = {};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;
    if (r.epfd < 0 || r.wake < 0 || epoll_ctl(r.epfd, EPOLL_CTL_ADD, r.wake, &ev) != 0) {
      CHORUS_WARN("rank %d: no epoll for the UCX progress thread (%s): workers make progress only inside collectives",
                  st.ctx->rank, strerror(errno));
      if (r.epfd >= 0) close(r.epfd);
      if (r.wake >= 0) close(r.wake);
      r.epfd = r.wake = -1;
      return Status::Ok;
    }
  }
  epoll_event ev = {};
  ev.events = kWatchEvents;
  ev.data.ptr = &st;
  if (epoll_ctl(r.epfd, EPOLL_CTL_ADD, efd, &ev) != 0) {
    CHORUS_WARN("rank %d: could not watch the UCX worker's events (%s): it makes progress only inside collectives",
                st.ctx->rank, strerror(errno));
    return Status::Ok;
  }
  st.progressEfd = efd;
  r.states.push_back(&st);
  if (!r.thread.joinable()) {
    r.stop = false;
    r.thread = std::thread([&r] { run(r); });
  }
  poke(r);  // arm the new worker
  return Status::Ok;
}

void ucxProgressWake() {
  Registry &r = registry();
  if (r.wake >= 0) poke(r);
}

void ucxProgressDetach(UcxState &st) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lifeLock(r.life);
  std::thread finished;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto at = std::find(r.states.begin(), r.states.end(), &st);
    if (at == r.states.end()) return;
    r.states.erase(at);
    epoll_ctl(r.epfd, EPOLL_CTL_DEL, st.progressEfd, nullptr);
    st.progressEfd = -1;
    if (r.states.empty()) {
      r.stop = true;
      finished = std::move(r.thread);
      poke(r);
    }
  }
  if (finished.joinable()) finished.join();
}

}  // namespace chorus
