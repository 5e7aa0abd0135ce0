// What libchorus_mpi.so (src/interpose) needs from the library: its setting,
// the probe of the MPIX_* checks, whether this thread is inside Chorus, and
// the logger.  A private ABI between the two libraries (chorus_interpose_*
// in chorus.map), deliberately not in chorus.h.
#include "api/nonblocking.h"
#include "api/validate.h"
#include "cuda/memtype.h"
#include "core/log.h"
#include "core/params.h"
#include "core/stats.h"

using namespace chorus;

extern "C" {

// CHORUS_INTERPOSE: 0 off, 1 device, 2 all.
int chorus_interpose_mode(void) {
  const char *mode = paramString(ParamId::Interpose);
  if (mode[0] == 'a' || mode[0] == 'A') return 2;
  if (mode[0] == 'o' || mode[0] == 'O') return 0;
  return 1;
}

// Whether this build can see device buffers at all.  Without CUDA, "device"
// routes nothing, and every rank knows it without agreeing (all ranks of a
// job run the same build).
int chorus_interpose_device_build(void) {
#ifdef CHORUS_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

void chorus_interpose_probe_begin(void) { t_probe = ApiProbe{true, false, -1, false, false}; }

// The try: the MPIX_* call that follows runs when Chorus supports it, and
// returns without a word when it does not.  `needContext`: refuse a
// communicator whose context is not set up yet.
void chorus_interpose_try_begin(int needContext) { t_probe = ApiProbe{true, false, -1, true, needContext != 0}; }

// After the tried call returned `rc`: 1 when Chorus took it (rc is then the
// call's own result, errors raised), 0 when it refused before running.
int chorus_interpose_try_end(int rc) {
  const bool took = !t_probe.active || rc == MPI_SUCCESS;
  t_probe.active = false;
  return took;
}

// Whether this process can see a GPU (CUDA builds with a driver and a
// device; emulated devices count).  Without one, no buffer of this process
// is device memory.
int chorus_interpose_local_device(void) { return cudaAvailable() ? 1 : 0; }

// The completion hook of the next MPIX_I* call (api/nonblocking.h).
void chorus_interpose_set_hook(void (*fn)(void *, int), void *arg) { t_completionHook = {fn, arg}; }

// After that call: 1 when it did not take the hook (it failed or was
// refused at the call), which is then the caller's to undo.
int chorus_interpose_take_back_hook(void) {
  const bool pending = t_completionHook.fn != nullptr;
  t_completionHook = {};
  return pending;
}

// After the probed MPIX_* call returned `rc`: 1 when Chorus would have run
// it, 0 when it refused; *where and *commOk as in ApiProbe.
int chorus_interpose_probe_end(int rc, int *where, int *commOk) {
  t_probe.active = false;
  *where = t_probe.where;
  *commOk = rc == MPI_SUCCESS || t_probe.commOk;
  return rc == MPI_SUCCESS;
}

int chorus_interpose_inside(void) { return t_apiDepth > 0; }

// Why the last refused try or probe was refused: 0 the communicator (null,
// not valid, inter), 1 the arguments (type, op, count, root, buffer), 2
// the communicator has no Chorus context (none yet for a nonblocking call,
// or its set-up failed).  The checks run in that order: a refusal after
// execute() looked at the buffers is one of the context.
int chorus_interpose_refusal(void) {
  if (!t_probe.commOk) return 0;
  return t_probe.where >= 0 ? 2 : 1;
}

int chorus_interpose_info_enabled(void) { return logEnabled(LogLevel::Info, kSubsysColl); }

void chorus_interpose_info(const char *line) { CHORUS_INFO(kSubsysColl, "%s", line); }

// The interposer's own WARN, with its file, line and function.
void chorus_interpose_warn(const char *file, int line, const char *func, const char *msg) {
  logPrint(LogLevel::Warn, kSubsysAll, file, line, func, "%s", msg);
}

// At MPI_Init: a job that routes nothing sets up no context, which is
// where the log learns its rank otherwise.
void chorus_interpose_set_rank(int worldRank) { logSetRank(worldRank); }

int chorus_interpose_stats_enabled(void) { return paramInt(ParamId::Stats) > 0; }

void chorus_interpose_stats(int rank, int nranks, const char *call, unsigned long long routed,
                            unsigned long long mpi, const char *why) {
  statsPrintRouting(rank, nranks, call, routed, mpi, why);
}

}  // extern "C"
