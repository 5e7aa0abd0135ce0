// What the Fortran module's C shims (src/fortran/chorus_f.c, built into
// libchorus_fortran) need from the library beyond chorus.h: where a buffer
// lives.  A strided array section of host memory is copied into a
// contiguous temporary around the call; one of device memory cannot be
// walked from the host and is refused.  chorus_f_* is exported by
// chorus.map and is not part of chorus.h.
#include "cuda/memtype.h"

extern "C" {

// 0 host, 1 device, 2 managed (host code may read and write it).
int chorus_f_memory_kind(const void *p) {
  using chorus::MemType;
  if (!chorus::deviceMemoryPossible()) return 0;
  MemType t = MemType::Host;
  if (chorus::detectMemType(p, &t) != chorus::Status::Ok) return 0;
  return t == MemType::Device ? 1 : t == MemType::Managed ? 2 : 0;
}

}  // extern "C"
