#include "type_shape.h"

#include <climits>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace chorus_interpose {
namespace {

// The shape cached on a derived type; `homogeneous` false caches a no.
struct CachedShape {
  TypeShape shape;
  bool homogeneous = false;
};

int deleteCachedShape(MPI_Datatype, int, void *value, void *) {
  delete static_cast<CachedShape *>(value);
  return MPI_SUCCESS;
}

int shapeKeyval() {
  static int keyval = MPI_KEYVAL_INVALID;
  static std::once_flag once;
  // A duplicated type gets no copy: it is walked again on first use.
  std::call_once(once, [] { PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, deleteCachedShape, &keyval, nullptr); });
  return keyval;
}

bool isNamed(MPI_Datatype dt) {
  int ni, na, nd, combiner;
  return PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) == MPI_SUCCESS && combiner == MPI_COMBINER_NAMED;
}

// The predefined type that every element of `dt`'s signature is, and
// whether `dt` lays its elements out as an array of it.
bool walk(MPI_Datatype dt, MPI_Datatype *base, bool *dense) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return false;
  if (combiner == MPI_COMBINER_NAMED) {
    *base = dt;
    *dense = true;
    return true;
  }
  std::vector<int> ints(size_t(ni) + 1);
  std::vector<MPI_Aint> addrs(size_t(na) + 1);
  std::vector<MPI_Datatype> types(size_t(nd) + 1);
  if (PMPI_Type_get_contents(dt, ni, na, nd, ints.data(), addrs.data(), types.data()) != MPI_SUCCESS) return false;
  bool ok = nd >= 1;
  bool innerDense = true;
  MPI_Datatype inner = MPI_DATATYPE_NULL;
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
    case MPI_COMBINER_RESIZED:
    case MPI_COMBINER_STRUCT:
      for (int i = 0; ok && i < nd; ++i) {
        MPI_Datatype b = MPI_DATATYPE_NULL;
        bool d = true;
        ok = walk(types[size_t(i)], &b, &d) && (inner == MPI_DATATYPE_NULL || b == inner);
        inner = b;
        innerDense = innerDense && d;
      }
      break;
    default:  // Fortran parameterised types and anything newer: left to MPI
      ok = false;
  }
  for (int i = 0; i < nd; ++i)
    if (!isNamed(types[size_t(i)])) PMPI_Type_free(&types[size_t(i)]);
  if (!ok) return false;
  *base = inner;
  *dense = innerDense && (combiner == MPI_COMBINER_DUP || combiner == MPI_COMBINER_CONTIGUOUS);
  return true;
}

// Predefined types seen by this thread: never freed, so never stale.
constexpr int kNamedCache = 8;
thread_local MPI_Datatype t_named[kNamedCache] __attribute__((tls_model("initial-exec")));
thread_local unsigned t_namedNext __attribute__((tls_model("initial-exec")));

// Elements of `dt` per call of MPI_Pack, so that the base count stays an int.
MPI_Count chunkOf(const TypeShape &shape) {
  const MPI_Count most = INT_MAX / 2 / shape.per;
  return most > 0 ? most : 1;
}

}  // namespace

bool typeShape(MPI_Datatype dt, TypeShape *out) {
  for (MPI_Datatype named : t_named)
    if (named == dt && dt != MPI_DATATYPE_NULL) {
      *out = TypeShape{dt, 1, true};
      return true;
    }
  if (dt == MPI_DATATYPE_NULL) return false;
  if (isNamed(dt)) {
    t_named[t_namedNext++ % kNamedCache] = dt;
    *out = TypeShape{dt, 1, true};
    return true;
  }
  const int keyval = shapeKeyval();
  void *value = nullptr;
  int found = 0;
  if (keyval != MPI_KEYVAL_INVALID && PMPI_Type_get_attr(dt, keyval, &value, &found) == MPI_SUCCESS && found) {
    const auto *cached = static_cast<CachedShape *>(value);
    *out = cached->shape;
    return cached->homogeneous;
  }
  // Walked and cached once per type, under a lock: a cached shape is never
  // replaced, so a thread reading it cannot see it freed by another's set.
  static std::mutex walking;
  std::lock_guard<std::mutex> lock(walking);
  if (keyval != MPI_KEYVAL_INVALID && PMPI_Type_get_attr(dt, keyval, &value, &found) == MPI_SUCCESS && found) {
    const auto *again = static_cast<CachedShape *>(value);
    *out = again->shape;
    return again->homogeneous;
  }
  auto *cached = new CachedShape;
  MPI_Datatype base = MPI_DATATYPE_NULL;
  bool dense = false;
  MPI_Count size = 0, baseSize = 0;
  if (walk(dt, &base, &dense) && PMPI_Type_size_x(dt, &size) == MPI_SUCCESS &&
      PMPI_Type_size_x(base, &baseSize) == MPI_SUCCESS && baseSize > 0 && size % baseSize == 0) {
    cached->shape = TypeShape{base, size / baseSize, dense};
    cached->homogeneous = size > 0;
  }
  *out = cached->shape;
  const bool homogeneous = cached->homogeneous;
  if (keyval == MPI_KEYVAL_INVALID || PMPI_Type_set_attr(dt, keyval, cached) != MPI_SUCCESS) delete cached;
  return homogeneous;
}

void *stageIn(const void *user, MPI_Count count, MPI_Datatype dt, const TypeShape &shape, bool copy, MPI_Comm comm) {
  MPI_Aint lb = 0, extent = 0, baseLb = 0, baseExtent = 0;
  PMPI_Type_get_extent(dt, &lb, &extent);
  PMPI_Type_get_extent(shape.base, &baseLb, &baseExtent);
  size_t bytes = 0;
  if (count < 0 || baseExtent < 0 ||
      __builtin_mul_overflow(size_t(count), size_t(shape.per), &bytes) ||
      __builtin_mul_overflow(bytes, size_t(baseExtent), &bytes))
    return nullptr;
  void *staged = malloc(bytes > 0 ? bytes : 1);
  if (!staged || !copy) return staged;
  const MPI_Count chunk = chunkOf(shape);
  std::vector<char> packed;
  for (MPI_Count done = 0; done < count; done += chunk) {
    const int n = int(count - done < chunk ? count - done : chunk);
    int packedSize = 0, position = 0;
    PMPI_Pack_size(n, dt, comm, &packedSize);
    packed.resize(size_t(packedSize));
    PMPI_Pack(static_cast<const char *>(user) + done * extent, n, dt, packed.data(), packedSize, &position, comm);
    position = 0;
    PMPI_Unpack(packed.data(), packedSize, &position, static_cast<char *>(staged) + done * shape.per * baseExtent,
                int(n * shape.per), shape.base, comm);
  }
  return staged;
}

int stageOut(const void *staged, void *user, MPI_Count count, MPI_Datatype dt, const TypeShape &shape, MPI_Comm comm) {
  MPI_Aint lb = 0, extent = 0, baseLb = 0, baseExtent = 0;
  PMPI_Type_get_extent(dt, &lb, &extent);
  PMPI_Type_get_extent(shape.base, &baseLb, &baseExtent);
  const MPI_Count chunk = chunkOf(shape);
  std::vector<char> packed;
  for (MPI_Count done = 0; done < count; done += chunk) {
    const int n = int(count - done < chunk ? count - done : chunk);
    int packedSize = 0, position = 0;
    PMPI_Pack_size(int(n * shape.per), shape.base, comm, &packedSize);
    packed.resize(size_t(packedSize));
    int rc = PMPI_Pack(static_cast<const char *>(staged) + done * shape.per * baseExtent, int(n * shape.per),
                       shape.base, packed.data(), packedSize, &position, comm);
    position = 0;
    if (rc == MPI_SUCCESS)
      rc = PMPI_Unpack(packed.data(), packedSize, &position, static_cast<char *>(user) + done * extent, n, dt, comm);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

void stageFree(void *staged) { free(staged); }

int stagingFailed(MPI_Comm comm) {
  PMPI_Comm_call_errhandler(comm, MPI_ERR_NO_MEM);
  return MPI_ERR_NO_MEM;
}

}  // namespace chorus_interpose
