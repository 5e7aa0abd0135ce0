// ucx transport: FIFOs to ranks on other nodes (see ucx.cc).
#pragma once

#include "transport/net.h"
#include "transport/transport.h"

namespace chorus {

extern const TransportOps kUcxTransport;
// The hooks the host primitives call for its FIFOs.
const NetOps &ucxNetOps();

}  // namespace chorus
