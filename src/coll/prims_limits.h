// What the host primitives (coll/prims_host.h) and the device ones
// (cuda/prims_device.cuh) agree on, in a header of its own: were the kernels
// to include the host primitives for it, every edit to the host side
// (prims_host.h, host_channel.h, checksum.h, transport/shm/cma.h) would
// rebuild every kernel group.
#pragma once

namespace chorus {

// The most peers one primitive step receives from, and the most it sends to.
constexpr int kMaxPrimPeers = 16;

}  // namespace chorus
