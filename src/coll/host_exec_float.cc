// Instantiation unit: the floating-point element types.
#include "coll/host_executor_impl.h"

namespace chorus {
template Status hostExecuteReduction<Half>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<BFloat16>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<Fp8E4M3>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<Fp8E5M2>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<float>(HostChannel &, const CollRequest &);
template Status hostExecuteReduction<double>(HostChannel &, const CollRequest &);
}  // namespace chorus
