// Where a user buffer lives, so the API can route a call to the host or the
// CUDA executor.  Compiled in every build: without CUDA every pointer is
// host memory.
#pragma once

#include "core/common.h"

namespace chorus {

enum class MemType { Host, Device, Managed };

const char *memTypeName(MemType t);

// Classify `p`.  Never fails on a machine without a GPU or driver: there
// every pointer is Host (a device pointer cannot exist in such a process).
// Pinned or registered host memory is Host.  Returns Status::Ok always
// today; the Status leaves room for a driver that reports a real failure.
Status detectMemType(const void *p, MemType *out);

// False while no GPU memory can exist in this process (the CUDA driver is
// not loaded): then every buffer is host memory and detectMemType need not
// be asked.  One cheap check per collective.
bool deviceMemoryPossible();

// Whether this build has the CUDA executor and a usable GPU is visible.
bool cudaAvailable();

}  // namespace chorus
