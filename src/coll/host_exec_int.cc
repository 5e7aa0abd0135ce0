// Instantiation unit: the integer element types.
#include "coll/host_executor_impl.h"

namespace chorus {
template Status hostExecuteReduction<int8_t>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<uint8_t>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<int16_t>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<uint16_t>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<int32_t>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<uint32_t>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<int64_t>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<uint64_t>(HostChannel &, const CollRequest &);
}  // namespace chorus
