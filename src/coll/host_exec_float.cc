// Instantiation unit: the floating-point element types (type table groups 1, 2).
#include "coll/host_executor_impl.h"

namespace chorus {
template Status hostExecuteGroup<1>(HostChannel &, const CollRequest &);
template Status hostExecuteGroup<2>(HostChannel &, const CollRequest &);
}  // namespace chorus
