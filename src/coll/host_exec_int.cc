// Instantiation unit: the integer element types (type table groups 3, 4).
#include "coll/host_executor_impl.h"

namespace chorus {
template Status hostExecuteGroup<3>(HostChannel &, const CollRequest &);
template Status hostExecuteGroup<4>(HostChannel &, const CollRequest &);
}  // namespace chorus
