// Device threads: a block's threads as fibers on one host thread, the pool
// of host threads that runs the blocks, the block barrier, the block's
// shared memory and the clock.
//
// Every block of a grid must run at the same time (blocks of different
// ranks wait for each other through FIFOs), so the pool never queues a
// block behind another: it starts a new host thread whenever none is idle.
// A block's threads meet only at barriers (__syncthreads) and in spin-waits
// that read the clock, so they run as fibers on their block's host thread,
// switched there and nowhere else: a barrier costs a switch per thread, not
// a futex sleep and wake-up per thread (32 host threads a block kept 2
// cores switching between them, half of an emulated run's time).
// CHORUS_EMU_THREADS=host runs every device thread as a host thread of its
// own instead, preempted anywhere: slower, but the threads of a block then
// interleave between barriers as a GPU's warps may.
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "emu_internal.h"

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#if defined(__x86_64__)
// Switch stacks: push the callee-saved registers, save the stack pointer in
// *from, load `to`, pop its registers and return into it (SysV ABI: the
// rest are the caller's to save).  A new fiber's stack starts as if it had
// switched out just before the trampoline, which calls r13(r12) on an
// aligned stack.
extern "C" void chorus_emu_switch(void **from, void *to);
extern "C" void chorus_emu_fiber_start();
asm(R"(
  .text
  .globl chorus_emu_switch
  .hidden chorus_emu_switch
  .type chorus_emu_switch, @function
chorus_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size chorus_emu_switch, .-chorus_emu_switch
  .globl chorus_emu_fiber_start
  .hidden chorus_emu_fiber_start
  .type chorus_emu_fiber_start, @function
chorus_emu_fiber_start:
  movq %r12, %rdi
  andq $-16, %rsp
  callq *%r13
  ud2
  .size chorus_emu_fiber_start, .-chorus_emu_fiber_start
)");

#endif

namespace chorus_emu {

namespace {

// CHORUS_EMU_THREADS, read once: true for fibers (the default), false for a
// host thread per device thread.
bool blockFibers() {
  static const bool fibers = [] {
    const char *v = getenv("CHORUS_EMU_THREADS");
    if (!v || !*v || strcmp(v, "fibers") == 0) return true;
    if (strcmp(v, "host") == 0) return false;
    fprintf(stderr, "chorus cuda emulation: CHORUS_EMU_THREADS=\"%s\": expected \"fibers\" or \"host\"\n", v);
    abort();
  }();
  return fibers;
}

void futexWait(std::atomic<uint32_t> *word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futexWakeAll(std::atomic<uint32_t> *word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// Host threads that run one task each at a time.  Never destroyed: its
// threads may still wait on it while the process exits.
class ThreadPool {
 public:
  using Task = std::function<void()>;

  void run(std::vector<Task> &tasks) {
    std::lock_guard<std::mutex> lock(mu_);
    for (Task &t : tasks) queue_.push_back(std::move(t));
    while (idle_ + starting_ < queue_.size()) {
      ++starting_;
      std::thread(&ThreadPool::work, this).detach();
    }
    cv_.notify_all();
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    --starting_;
    for (;;) {
      ++idle_;
      cv_.wait(lock, [this] { return !queue_.empty(); });
      --idle_;
      Task t = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      t();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  size_t idle_ = 0, starting_ = 0;
};

ThreadPool &pool() {
  static ThreadPool *p = new ThreadPool;
  return *p;
}

// Counts finished blocks; the stream waits for all of a grid's.
struct Latch {
  std::mutex mu;
  std::condition_variable cv;
  size_t left;
  void done() {
    std::lock_guard<std::mutex> lock(mu);
    if (--left == 0) cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return left == 0; });
  }
};

// ---- fibers ---------------------------------------------------------------------------

// A fiber's stack: the kernels keep little on theirs (a GPU thread has a few
// KiB of local memory), but printf and the launch closure's frames sit there
// too.  Pages are touched on use; the lowest is a guard, so an overflow
// faults instead of writing into the next stack.
constexpr size_t kStackBytes = 256 * 1024;

struct Fiber;
void runFiber(Fiber *f);

#if defined(__x86_64__)
struct Context {
  void *sp = nullptr;
};
inline void switchContext(Context &from, Context &to) { chorus_emu_switch(&from.sp, to.sp); }
void makeContext(Context &c, char *stack, size_t bytes, Fiber *f) {
  void **sp = reinterpret_cast<void **>(stack + bytes);  // 16-aligned: stacks are whole pages
  *--sp = nullptr;                                       // above the trampoline's frame
  *--sp = reinterpret_cast<void *>(&chorus_emu_fiber_start);
  *--sp = nullptr;                                 // rbp
  *--sp = nullptr;                                 // rbx
  *--sp = f;                                       // r12: the argument
  *--sp = reinterpret_cast<void *>(&runFiber);     // r13: the entry
  *--sp = nullptr;                                 // r14
  *--sp = nullptr;                                 // r15
  c.sp = sp;
}
#else
// Elsewhere ucontext, which saves the signal mask too (a system call a
// switch: slower, the same semantics).
struct Context {
  ucontext_t uc;
};
inline void switchContext(Context &from, Context &to) { swapcontext(&from.uc, &to.uc); }
void makeContext(Context &c, char *stack, size_t bytes, Fiber *f) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = bytes;
  c.uc.uc_link = nullptr;
  // makecontext passes ints: the pointer goes in two halves.
  const uintptr_t p = reinterpret_cast<uintptr_t>(f);
  makecontext(&c.uc, reinterpret_cast<void (*)()>(+[](unsigned hi, unsigned lo) {
                runFiber(reinterpret_cast<Fiber *>((uintptr_t(hi) << 32) | lo));
              }),
              2, unsigned(uint64_t(p) >> 32), unsigned(p & 0xffffffffu));
}
#endif

// Stacks stay with the host thread that made them, for its next blocks.
char *takeStack(size_t i) {
  thread_local std::vector<char *> stacks;
  while (stacks.size() <= i) {
    void *m = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                   -1, 0);
    if (m == MAP_FAILED) {
      perror("chorus cuda emulation: mmap of a device thread's stack");
      abort();
    }
    // The guard page turns a device thread's stack overflow into a fault
    // at once, not another fiber's stack quietly overwritten.
    if (mprotect(m, size_t(sysconf(_SC_PAGESIZE)), PROT_NONE) != 0) {
      perror("chorus cuda emulation: mprotect of a device thread's stack guard page");
      abort();
    }
    stacks.push_back(static_cast<char *>(m));
  }
  return stacks[i];
}

// One block running on this host thread: its fibers, the one running, and
// where to go back to when the last has finished.
struct BlockRun;
struct Fiber {
  Context context;
  BlockRun *run = nullptr;
  ThreadCoords coords;
  bool done = false;
};
struct BlockRun {
  const DeviceThreadBody *body = nullptr;
  std::vector<Fiber> fibers;
  size_t current = 0, live = 0;
  Context host;
};
thread_local BlockRun *tRun = nullptr;

// Hand the host thread to the block's next unfinished fiber; back here when
// a later switch comes round to this one.  Alone in its block: nothing to do.
void switchToNext(BlockRun &run) {
  const size_t n = run.fibers.size(), from = run.current;
  for (size_t k = 1; k < n; ++k) {
    const size_t to = (from + k) % n;
    if (run.fibers[to].done) continue;
    run.current = to;
    switchContext(run.fibers[from].context, run.fibers[to].context);
    return;
  }
}

void runFiber(Fiber *f) {
  BlockRun &run = *f->run;
  (*run.body)(f->coords);
  f->done = true;
  if (--run.live == 0) {
    switchContext(f->context, run.host);
  } else {
    switchToNext(run);
  }
  __builtin_trap();  // nothing switches back to a finished fiber
}

void runBlock(const DeviceThreadBody &body, std::vector<ThreadCoords> &coords) {
  BlockRun run;
  run.body = &body;
  run.fibers.resize(coords.size());
  run.live = coords.size();
  for (size_t t = 0; t < coords.size(); ++t) {
    Fiber &f = run.fibers[t];
    f.run = &run;
    f.coords = coords[t];
    makeContext(f.context, takeStack(t), kStackBytes, &f);
  }
  tRun = &run;
  run.current = 0;
  switchContext(run.host, run.fibers[0].context);
  tRun = nullptr;
}

}  // namespace

// 48 KiB of shared memory per block, as every GPU Chorus targets has.
constexpr size_t kSharedBytes = 48 * 1024;

struct BlockState {
  // Sense by generation: the last thread to arrive starts the next one.
  // (Atomic for CHORUS_EMU_THREADS=host; uncontended among fibers.)
  std::atomic<uint32_t> arrived{0};
  std::atomic<uint32_t> generation{0};
  // __syncthreads_or: the OR of generation g's predicates is built in
  // orOf[g % 2].  The last arrival of g clears orOf[(g + 1) % 2]: every
  // thread has arrived at g, so all have read g - 1's result from it.
  std::atomic<uint32_t> orOf[2] = {{0}, {0}};
  uint32_t nthreads = 0;
  alignas(16) unsigned char shared[kSharedBytes];
};

int blockBarrierOr(BlockState *b, int predicate) {
  const uint32_t gen = b->generation.load(std::memory_order_acquire);
  if (predicate) b->orOf[gen & 1].fetch_or(1, std::memory_order_relaxed);
  if (b->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == b->nthreads) {
    b->orOf[(gen + 1) & 1].store(0, std::memory_order_relaxed);
    b->arrived.store(0, std::memory_order_relaxed);
    b->generation.fetch_add(1, std::memory_order_acq_rel);
    if (!tRun) futexWakeAll(&b->generation);
    return int(b->orOf[gen & 1].load(std::memory_order_relaxed));
  }
  if (tRun) {
    while (b->generation.load(std::memory_order_acquire) == gen) switchToNext(*tRun);
  } else {  // host threads outnumber cores: spin briefly, then sleep in the kernel
    for (int spin = 0; spin < 64 && b->generation.load(std::memory_order_acquire) == gen; ++spin) {
    }
    while (b->generation.load(std::memory_order_acquire) == gen) futexWait(&b->generation, gen);
  }
  return int(b->orOf[gen & 1].load(std::memory_order_relaxed));
}

void blockBarrier(BlockState *b) { blockBarrierOr(b, 0); }

void *blockSharedMemory(BlockState *b, size_t *capacity) {
  *capacity = kSharedBytes;
  return b->shared;
}

namespace {
long long nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
}  // namespace

// The kernels read the clock when a wait starts and once per 1024 polls of
// a flag that has not come; a thread that reads it has been running for a
// while or is spinning, and the two cannot be told apart here.  So every
// reader that has had the core for kSliceNs since it last gave it up gives
// it to the other threads of its block, then to the other host threads: a
// spinning thread keeps a core for at most that long, the threads it waits
// for get their turn, and working threads lose little.
long long deviceClock() {
  constexpr long long kSliceNs = 20000;  // measured: 5 us and 50 us were several times slower
  thread_local long long lastYield = 0;
  long long now = nowNs();
  if (now - lastYield >= kSliceNs) {
    if (tRun) switchToNext(*tRun);
    sched_yield();
    now = nowNs();
    lastYield = now;
  }
  return now;
}

void runGrid(dim3 grid, dim3 block, const DeviceThreadBody &body) {
  const size_t nblocks = size_t(grid.x) * grid.y * grid.z;
  const uint32_t nthreads = block.x * block.y * block.z;
  const bool fibers = blockFibers();
  std::vector<std::unique_ptr<BlockState>> blocks(nblocks);
  // Host mode, first grid only: the host thread each of block 0's threads
  // ran on, counted and reported once, so that a test can tell this mode
  // really ran (fibers give the same answers).
  static std::atomic<bool> hostModeReported{false};
  std::vector<long> hostTids;
  if (!fibers && !hostModeReported.exchange(true)) hostTids.assign(nthreads, 0);
  Latch latch;
  latch.left = fibers ? nblocks : nblocks * nthreads;
  std::vector<std::function<void()>> tasks;
  tasks.reserve(latch.left);
  for (size_t b = 0; b < nblocks; ++b) {
    blocks[b].reset(new BlockState);
    blocks[b]->nthreads = nthreads;
    std::vector<ThreadCoords> coords(nthreads);
    for (uint32_t t = 0; t < nthreads; ++t) {
      ThreadCoords &c = coords[t];
      c.threadIndex = uint3{t % block.x, t / block.x % block.y, t / (block.x * block.y)};
      c.blockIndex = uint3{unsigned(b % grid.x), unsigned(b / grid.x % grid.y), unsigned(b / (size_t(grid.x) * grid.y))};
      c.blockSize = block;
      c.gridSize = grid;
      c.block = blocks[b].get();
    }
    if (!fibers) {
      for (uint32_t t = 0; t < nthreads; ++t)
        tasks.push_back([&body, c = coords[t], t, &latch, b, &hostTids] {
          if (b == 0 && !hostTids.empty()) hostTids[t] = long(syscall(SYS_gettid));
          body(c);
          latch.done();
        });
      continue;
    }
    tasks.push_back([&body, coords, &latch]() mutable {
      runBlock(body, coords);
      latch.done();
    });
  }
  pool().run(tasks);
  latch.wait();
  if (!hostTids.empty()) {
    std::sort(hostTids.begin(), hostTids.end());
    const size_t distinct = size_t(std::unique(hostTids.begin(), hostTids.end()) - hostTids.begin());
    fprintf(stderr, "chorus cuda emulation: CHORUS_EMU_THREADS=host: a block's %u threads ran on %zu host threads\n", nthreads, distinct);
  }
}

}  // namespace chorus_emu
