// Device threads: a pool of host threads that only grows, the block barrier,
// the block's shared memory and the clock.
//
// Every thread of a grid must run at the same time (a block's threads meet
// at barriers; blocks of different ranks wait for each other through FIFOs),
// so the pool never queues a device thread behind another: it starts a new
// host thread whenever none is idle.  Threads outnumber cores by far, so
// waiting is done in the kernel (futex) and spinning kept short.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "emu_internal.h"

namespace chorus_emu {

namespace {

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

// Counts finished device threads; the stream waits for all of a grid's.
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

}  // namespace

// 48 KiB of shared memory per block, as every GPU Chorus targets has.
constexpr size_t kSharedBytes = 48 * 1024;

struct BlockState {
  // Sense by generation: the last thread to arrive starts the next one.
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
    futexWakeAll(&b->generation);
    return int(b->orOf[gen & 1].load(std::memory_order_relaxed));
  }
  for (int spin = 0; spin < 64; ++spin)
    if (b->generation.load(std::memory_order_acquire) != gen) return int(b->orOf[gen & 1].load(std::memory_order_relaxed));
  while (b->generation.load(std::memory_order_acquire) == gen) futexWait(&b->generation, gen);
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
// reader that has had the core for kSliceNs since it last gave it up yields
// it: a spinning thread keeps a core for at most that long, the threads it
// waits for get their turn, and working threads lose little.
long long deviceClock() {
  constexpr long long kSliceNs = 20000;  // measured: 5 us and 50 us were several times slower
  thread_local long long lastYield = 0;
  long long now = nowNs();
  if (now - lastYield >= kSliceNs) {
    sched_yield();
    now = nowNs();
    lastYield = now;
  }
  return now;
}

void runGrid(dim3 grid, dim3 block, const DeviceThreadBody &body) {
  const size_t nblocks = size_t(grid.x) * grid.y * grid.z;
  const uint32_t nthreads = block.x * block.y * block.z;
  std::vector<std::unique_ptr<BlockState>> blocks(nblocks);
  Latch latch;
  latch.left = nblocks * nthreads;
  std::vector<std::function<void()>> tasks;
  tasks.reserve(latch.left);
  for (size_t b = 0; b < nblocks; ++b) {
    blocks[b].reset(new BlockState);
    blocks[b]->nthreads = nthreads;
    for (uint32_t t = 0; t < nthreads; ++t) {
      ThreadCoords c;
      c.threadIndex = uint3{t % block.x, t / block.x % block.y, t / (block.x * block.y)};
      c.blockIndex = uint3{unsigned(b % grid.x), unsigned(b / grid.x % grid.y), unsigned(b / (size_t(grid.x) * grid.y))};
      c.blockSize = block;
      c.gridSize = grid;
      c.block = blocks[b].get();
      tasks.push_back([&body, c, &latch] {
        body(c);
        latch.done();
      });
    }
  }
  pool().run(tasks);
  latch.wait();
}

}  // namespace chorus_emu
