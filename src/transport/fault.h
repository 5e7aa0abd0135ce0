// Naming the cause of a failed collective, not just the neighbour a rank
// waited for: which peers on this machine died, and which never entered
// the call (their RankStatus, in shared memory, says how far they got).
// Nothing here sends a message: after a failure MPI may hang.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus {

struct PeerLinks;

struct RankStatus;

// A process that is gone, or a zombie its parent has not reaped yet.
bool processDead(int32_t pid);

// The first peer on this node (status[p] non-null, p != self) whose
// RankStatus says it failed in collective `seq`; -1 when none did.
int peerFailedIn(const RankStatus *const *status, int nranks, int self, uint64_t seq);

// "#11: rank 2 never entered it (its last was #10); " for collective `seq`
// of `ctx`; failing that, a peer that failed in this same call ("#11: rank
// 1 failed in it; "); or "" when every peer this rank can see got that far,
// lives and has not failed.
void describeCause(const PeerLinks &ctx, uint64_t seq, char *out, size_t size);

}  // namespace chorus
