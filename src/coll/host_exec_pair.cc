// Instantiation unit: the MINLOC/MAXLOC pair types (type table group 5).
#include "coll/host_executor_impl.h"

namespace chorus {
template Status hostExecuteGroup<5>(HostChannel &, const CollRequest &);
}  // namespace chorus
