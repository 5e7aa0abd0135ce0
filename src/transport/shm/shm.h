// The shm transport's segment handling, apart from its operations table
// (transport.h) so that the unit tests can check what a hostile local user
// would try: permissions, exclusive creation, guessable names.
#pragma once

#include <cstddef>

#include "core/common.h"

namespace chorus {

// A fresh segment name: "/chorus-<pid>-<pid namespace, hex>-<sequence>-<64
// random bits in hex>".
void shmSegmentName(char *out, size_t len);

// Map segment `name` of `bytes`.  With `create`, create it exclusively
// (O_EXCL: a name that exists already, pre-created by anyone, is refused)
// with mode 0600 and reserve its pages; otherwise open an existing one,
// refused (SystemError) unless it is `bytes` long and this user's.
Status shmMapSegment(const char *name, size_t bytes, bool create, char **out);

// Remove the segments that processes of this pid namespace and user named
// (shmSegmentName) and left behind when they died before unlinking them (a
// job killed during its set-up).  Returns how many were removed.
int shmReapDead();

struct PeerLinks;
// The bytes of the segment `owner` creates (its status word, the publish
// ring where there is one, an inbound FIFO from each peer on its node), as
// shmSetup sizes it; 0 when `owner` is alone on its node.
size_t shmSegmentBytesOf(const PeerLinks &links, int owner);
// Whether the communicator has publish rings (one node, few enough readers
// for their counters): then every rank keeps an end of each.
bool shmHasPublishRing(const PeerLinks &links);
// The bytes the shm transport's by-rank tables hold, measured from them
// (kShmTransport.bytesPerPeer counts them for the footprint); for tests.
size_t shmTableBytes(const PeerLinks &links);

}  // namespace chorus
