// Streams, events, graphs, kernel launches and copies.
//
// cudaStreamPerThread is one handle that names a different stream in each
// host thread (and device), created on first use, as in CUDA.
// A stream is an in-order queue served by a host thread of its own, so work
// queued on it runs while the caller goes on, as on a GPU.  Each device has
// a legacy (null) stream per process.  Not emulated: the legacy stream's
// implicit ordering with other blocking streams (Chorus and its tests order
// streams with events or synchronise explicitly).
//
// An event counts the records queued on it and the records done; waiting
// for an event waits for the records queued before the wait was asked.
// Capturing a stream puts its operations into a graph instead of the queue;
// launching the graph queues them again, as often as wanted.  An event record
// or wait captured with the External flag binds its event when the graph is
// launched, as CUDA's event record and wait nodes do: a graph's record is
// the event's newest, and its wait waits for the newest record made before
// the launch, so replays are ordered with eager work and other graphs.
// A plain wait inside a capture on an event last recorded outside it fails
// with cudaErrorStreamCaptureIsolation and invalidates the capture, as on CUDA.
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "emu_internal.h"

// One captured operation: called at each launch of the graph, it returns
// the work to queue (for most operations, the work captured).
using GraphOp = std::function<chorus_emu::StreamOp()>;
struct CUgraph_st {
  std::vector<GraphOp> ops;
};
struct CUgraphExec_st {
  std::vector<GraphOp> ops;
};

struct CUstream_st {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<chorus_emu::StreamOp> queue;
  uint64_t queued = 0, done = 0;
  bool stop = false;
  CUgraph_st *capture = nullptr;  // while capturing, operations go here
  bool invalidated = false;       // the capture broke: EndCapture fails
  std::thread server;

  CUstream_st() : server(&CUstream_st::serve, this) {}

  void serve() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [this] { return stop || !queue.empty(); });
      if (queue.empty()) return;
      chorus_emu::StreamOp op = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      op();
      lock.lock();
      ++done;
      cv.notify_all();
    }
  }

  void push(chorus_emu::StreamOp op) {
    std::lock_guard<std::mutex> lock(mu);
    queue.push_back(std::move(op));
    ++queued;
    cv.notify_all();
  }

  void synchronize() {
    std::unique_lock<std::mutex> lock(mu);
    const uint64_t target = queued;
    cv.wait(lock, [&] { return done >= target; });
  }
};

struct CUevent_st {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0, completed = 0;
  bool lastRecordCaptured = false;  // by a plain record inside a capture
  std::chrono::steady_clock::time_point when;

  void waitFor(uint64_t target) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return completed >= target; });
  }
};

namespace chorus_emu {

namespace {

constexpr int kMaxDevices = 64;

// Streams never die with the process (their threads may be busy at exit).
struct StreamRegistry {
  std::mutex mu;
  std::vector<CUstream_st *> all;
  CUstream_st *legacy[kMaxDevices] = {};
};
StreamRegistry &registry() {
  static StreamRegistry *r = new StreamRegistry;
  return *r;
}

// The stream a handle stands for: itself, the device's legacy stream for
// nullptr, or for cudaStreamPerThread the calling host thread's own stream
// on the device (one handle, a different stream in every thread, as CUDA).
CUstream_st *resolve(cudaStream_t s) {
  if (s && s != cudaStreamPerThread) return s;
  StreamRegistry &r = registry();
  const int dev = currentDevice();
  thread_local CUstream_st *perThread[kMaxDevices] = {};
  CUstream_st **slot = s ? &perThread[dev] : &r.legacy[dev];
  std::lock_guard<std::mutex> lock(r.mu);
  if (!*slot) {
    *slot = new CUstream_st;
    r.all.push_back(*slot);
  }
  return *slot;
}

// Sets the launch error of the calling thread, read by cudaGetLastError.
cudaError_t validLaunch(dim3 grid, dim3 block) {
  const size_t threads = size_t(block.x) * block.y * block.z;
  const size_t blocks = size_t(grid.x) * grid.y * grid.z;
  if (threads == 0 || threads > 1024 || blocks == 0) return cudaErrorInvalidConfiguration;
  return cudaSuccess;
}

}  // namespace

// Queue make() now, or keep `make` in the graph being captured.
cudaError_t enqueueAtLaunch(cudaStream_t stream, GraphOp make) {
  CUstream_st *s = resolve(stream);
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->capture) {
      s->capture->ops.push_back(std::move(make));
      return cudaSuccess;
    }
  }
  s->push(make());
  return cudaSuccess;
}

cudaError_t enqueue(cudaStream_t stream, StreamOp op) {
  return enqueueAtLaunch(stream, [op = std::move(op)] { return op; });
}

bool capturing(cudaStream_t stream) {
  CUstream_st *s = resolve(stream);
  std::lock_guard<std::mutex> lock(s->mu);
  return s->capture != nullptr;
}

void synchronizeAllStreams() {
  std::vector<CUstream_st *> all;
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    all = registry().all;
  }
  for (CUstream_st *s : all) s->synchronize();
}

void submitKernel(cudaStream_t stream, dim3 grid, dim3 block, DeviceThreadBody body) {
  const cudaError_t e = validLaunch(grid, block);
  if (e != cudaSuccess) {
    fail(e);
    return;
  }
  enqueue(stream, [grid, block, body] { runGrid(grid, block, body); });
}

}  // namespace chorus_emu

using chorus_emu::enqueue;
using chorus_emu::enqueueAtLaunch;
using chorus_emu::fail;

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t *stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int) {
  if (!stream) return fail(cudaErrorInvalidValue);
  auto *s = new CUstream_st;
  std::lock_guard<std::mutex> lock(chorus_emu::registry().mu);
  chorus_emu::registry().all.push_back(s);
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream || stream == cudaStreamPerThread) return fail(cudaErrorInvalidResourceHandle);
  {
    std::lock_guard<std::mutex> lock(chorus_emu::registry().mu);
    auto &all = chorus_emu::registry().all;
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i] == stream) all.erase(all.begin() + long(i));
  }
  // CUDA lets queued work finish after the call returns; finishing it first
  // is indistinguishable to the caller.
  {
    std::lock_guard<std::mutex> lock(stream->mu);
    stream->stop = true;
    stream->cv.notify_all();
  }
  stream->server.join();
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  chorus_emu::resolve(stream)->synchronize();
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  chorus_emu::synchronizeAllStreams();
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus *status) {
  if (!status) return fail(cudaErrorInvalidValue);
  CUstream_st *s = chorus_emu::resolve(stream);
  std::lock_guard<std::mutex> lock(s->mu);
  *status = !s->capture ? cudaStreamCaptureStatusNone
            : s->invalidated ? cudaStreamCaptureStatusInvalidated
                             : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  if (!stream) return fail(cudaErrorStreamCaptureUnsupported);  // as CUDA: not the legacy stream
  stream = chorus_emu::resolve(stream);
  std::lock_guard<std::mutex> lock(stream->mu);
  if (stream->capture) return fail(cudaErrorStreamCaptureInvalidated);
  stream->capture = new CUgraph_st;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
  if (!stream || !graph) return fail(cudaErrorInvalidValue);
  stream = chorus_emu::resolve(stream);
  std::lock_guard<std::mutex> lock(stream->mu);
  if (!stream->capture) return fail(cudaErrorStreamCaptureInvalidated);
  CUgraph_st *captured = stream->capture;
  const bool broken = stream->invalidated;
  stream->capture = nullptr;
  stream->invalidated = false;
  if (broken) {
    delete captured;
    *graph = nullptr;
    return fail(cudaErrorStreamCaptureInvalidated);
  }
  *graph = captured;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long) {
  if (!exec || !graph) return fail(cudaErrorInvalidValue);
  *exec = new CUgraphExec_st{graph->ops};
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (!exec) return fail(cudaErrorInvalidResourceHandle);
  for (const GraphOp &make : exec->ops) enqueue(stream, make());
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}

// ---- events ---------------------------------------------------------------------------

cudaError_t cudaEventCreate(cudaEvent_t *event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int) {
  if (!event) return fail(cudaErrorInvalidValue);
  *event = new CUevent_st;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  // A record still queued would touch it: let those finish first.
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(event->mu);
    target = event->recorded;
  }
  event->waitFor(target);
  delete event;
  return cudaSuccess;
}

namespace {

// The next record of `event`, made now: the work that completes it.
chorus_emu::StreamOp recordNow(cudaEvent_t event, bool captured) {
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(event->mu);
    target = ++event->recorded;
    event->lastRecordCaptured = captured;
  }
  return [event, target] {
    std::lock_guard<std::mutex> lock(event->mu);
    if (target > event->completed) event->completed = target;
    event->when = std::chrono::steady_clock::now();
    event->cv.notify_all();
  };
}

// Waiting for `event` as recorded now.
chorus_emu::StreamOp waitNow(cudaEvent_t event) {
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(event->mu);
    target = event->recorded;
  }
  return [event, target] { event->waitFor(target); };
}

}  // namespace

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  if (flags & ~cudaEventRecordExternal) return fail(cudaErrorInvalidValue);
  if ((flags & cudaEventRecordExternal) && chorus_emu::capturing(stream))
    return enqueueAtLaunch(stream, [event] { return recordNow(event, false); });
  return enqueue(stream, recordNow(event, chorus_emu::capturing(stream)));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return cudaEventRecordWithFlags(event, stream, cudaEventRecordDefault);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  if (flags & ~cudaEventWaitExternal) return fail(cudaErrorInvalidValue);
  if (chorus_emu::capturing(stream)) {
    if (flags & cudaEventWaitExternal) return enqueueAtLaunch(stream, [event] { return waitNow(event); });
    bool outside;
    {
      std::lock_guard<std::mutex> lock(event->mu);
      outside = event->recorded > 0 && !event->lastRecordCaptured;
    }
    if (outside) {
      stream = chorus_emu::resolve(stream);
      std::lock_guard<std::mutex> lock(stream->mu);
      delete stream->capture;
      stream->capture = new CUgraph_st;
      stream->invalidated = true;
      return fail(cudaErrorStreamCaptureIsolation);
    }
  }
  return enqueue(stream, waitNow(event));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(event->mu);
    target = event->recorded;
  }
  event->waitFor(target);
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!event) return fail(cudaErrorInvalidResourceHandle);
  std::lock_guard<std::mutex> lock(event->mu);
  return event->completed >= event->recorded ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms || !start || !end) return fail(cudaErrorInvalidValue);
  if (cudaEventQuery(start) != cudaSuccess || cudaEventQuery(end) != cudaSuccess) return fail(cudaErrorNotReady);
  std::lock_guard<std::mutex> a(start->mu);
  std::lock_guard<std::mutex> b(end->mu);
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}

// ---- copies -------------------------------------------------------------------------------
// Device and host memory share one address space, so every kind of copy is
// a memcpy; the synchronous ones run on the legacy stream and wait for it.

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind, cudaStream_t stream) {
  if (count && (!dst || !src)) return fail(cudaErrorInvalidValue);
  return enqueue(stream, [dst, src, count] { memcpy(dst, src, count); });
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind) {
  const cudaError_t e = cudaMemcpyAsync(dst, src, count, kind, nullptr);
  if (e != cudaSuccess) return e;
  return cudaStreamSynchronize(nullptr);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind, cudaStream_t stream) {
  if (width > dpitch || width > spitch) return fail(cudaErrorInvalidValue);
  if (width && height && (!dst || !src)) return fail(cudaErrorInvalidValue);
  return enqueue(stream, [=] {
    for (size_t row = 0; row < height; ++row)
      memcpy(static_cast<char *>(dst) + row * dpitch, static_cast<const char *>(src) + row * spitch, width);
  });
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream) {
  if (count && !devPtr) return fail(cudaErrorInvalidValue);
  return enqueue(stream, [devPtr, value, count] { memset(devPtr, value, count); });
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count) {
  const cudaError_t e = cudaMemsetAsync(devPtr, value, count, nullptr);
  if (e != cudaSuccess) return e;
  return cudaStreamSynchronize(nullptr);
}

}  // extern "C"
