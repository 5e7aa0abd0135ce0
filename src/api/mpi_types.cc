#include "api/mpi_types.h"

#include <atomic>
#include <climits>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include "chorus.h"
#include "coll/functors.h"

namespace chorus {

namespace {

// Library-provided handles, created on first use after MPI_Init and freed
// at MPI_Finalize by an attribute on MPI_COMM_SELF.
struct CustomHandles {
  std::once_flag once;
  // Set once the handles exist, cleared when MPI_Finalize frees them: the
  // per-call path then skips asking MPI whether it is initialised.
  std::atomic<bool> ready{false};
  MPI_Datatype float16 = MPI_DATATYPE_NULL, bfloat16 = MPI_DATATYPE_NULL;
  MPI_Datatype e4m3 = MPI_DATATYPE_NULL, e5m2 = MPI_DATATYPE_NULL;
  MPI_Op avg = MPI_OP_NULL;
  int keyval = MPI_KEYVAL_INVALID;
};

CustomHandles &handles() {
  static CustomHandles h;
  return h;
}

// MPI only calls this if a user passes MPIX_GPU_AVG to an MPI collective;
// an average needs the group size, which a binary MPI op never sees.  It
// sums MPI's float types so the result is at least the numerator.
void avgForMpi(void *in, void *inout, int *len, MPI_Datatype *dt) {
  if (*dt == MPI_FLOAT)
    for (int i = 0; i < *len; ++i) static_cast<float *>(inout)[i] += static_cast<float *>(in)[i];
  else if (*dt == MPI_DOUBLE)
    for (int i = 0; i < *len; ++i) static_cast<double *>(inout)[i] += static_cast<double *>(in)[i];
}

int freeHandles(MPI_Comm, int, void *, void *) {
  CustomHandles &h = handles();
  h.ready = false;
  for (MPI_Datatype *t : {&h.float16, &h.bfloat16, &h.e4m3, &h.e5m2})
    if (*t != MPI_DATATYPE_NULL) MPI_Type_free(t);
  if (h.avg != MPI_OP_NULL) MPI_Op_free(&h.avg);
  MPI_Comm_free_keyval(&h.keyval);
  return MPI_SUCCESS;
}

MPI_Datatype makeType(int bytes, const char *name) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(bytes, MPI_BYTE, &t);
  MPI_Type_commit(&t);
  MPI_Type_set_name(t, const_cast<char *>(name));
  return t;
}

CustomHandles &ensureHandles() {
  CustomHandles &h = handles();
  if (h.ready.load(std::memory_order_acquire)) return h;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return h;  // handles stay NULL: calls then fail cleanly
  std::call_once(h.once, [&h] {
    h.float16 = makeType(2, "MPIX_GPU_FLOAT16");
    h.bfloat16 = makeType(2, "MPIX_GPU_BFLOAT16");
    h.e4m3 = makeType(1, "MPIX_GPU_FP8_E4M3");
    h.e5m2 = makeType(1, "MPIX_GPU_FP8_E5M2");
    MPI_Op_create(avgForMpi, 1, &h.avg);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, freeHandles, &h.keyval, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, h.keyval, nullptr);
    h.ready = true;
  });
  return h;
}

struct NamedType {
  MPI_Datatype handle;
  enum { Signed, Unsigned, Float, Other } kind;
  // Asked of MPI once, when first used: every call maps its datatype.
  // (0: not asked yet; -1: size and extent differ, so classified like any
  // other predefined type.  Races only store the same value twice.)
  std::atomic<int> size{0};
};

struct NamedTable {
  NamedType *first, *last;
  NamedType *begin() const { return first; }
  NamedType *end() const { return last; }
};

// The hot path: the types most calls use, found by a pointer comparison.
// Resolved at run time: with Open MPI the handles are addresses, not constants.
// Fortran's named types are here too: Fortran codes reach us through the
// C shims of src/fortran with their own handles.  A type that is not here,
// or whose size differs from its extent, is classified from MPI's own
// description of it (classifyPredefined): this table only names what the
// bytes mean, never how many there are.
NamedTable namedTypes() {
  // Built once (predefined handles never change within a process); the
  // commonest types first.
  static NamedType table[] = {
      {MPI_FLOAT, NamedType::Float},
      {MPI_DOUBLE, NamedType::Float},
      {MPI_INT, NamedType::Signed},
      {MPI_INT8_T, NamedType::Signed},
      {MPI_UINT8_T, NamedType::Unsigned},
      {MPI_INT16_T, NamedType::Signed},
      {MPI_UINT16_T, NamedType::Unsigned},
      {MPI_INT32_T, NamedType::Signed},
      {MPI_UINT32_T, NamedType::Unsigned},
      {MPI_INT64_T, NamedType::Signed},
      {MPI_UINT64_T, NamedType::Unsigned},
      {MPI_SIGNED_CHAR, NamedType::Signed},
      {MPI_UNSIGNED_CHAR, NamedType::Unsigned},
      {MPI_SHORT, NamedType::Signed},
      {MPI_UNSIGNED_SHORT, NamedType::Unsigned},
      {MPI_UNSIGNED, NamedType::Unsigned},
      {MPI_LONG, NamedType::Signed},
      {MPI_UNSIGNED_LONG, NamedType::Unsigned},
      {MPI_LONG_LONG, NamedType::Signed},
      {MPI_UNSIGNED_LONG_LONG, NamedType::Unsigned},
      {MPI_AINT, NamedType::Signed},
      {MPI_OFFSET, NamedType::Signed},
      {MPI_COUNT, NamedType::Signed},
      {MPI_INTEGER, NamedType::Signed},
      {MPI_INTEGER1, NamedType::Signed},
      {MPI_INTEGER2, NamedType::Signed},
      {MPI_INTEGER4, NamedType::Signed},
      {MPI_INTEGER8, NamedType::Signed},
      {MPI_REAL, NamedType::Float},
      {MPI_REAL4, NamedType::Float},
      {MPI_REAL8, NamedType::Float},
      {MPI_DOUBLE_PRECISION, NamedType::Float},
      {MPI_BYTE, NamedType::Other},
  };
  return {std::begin(table), std::end(table)};
}

DataType integerType(int bytes, bool isSigned) {
  switch (bytes) {
    case 1: return isSigned ? DataType::Int8 : DataType::Uint8;
    case 2: return isSigned ? DataType::Int16 : DataType::Uint16;
    case 4: return isSigned ? DataType::Int32 : DataType::Uint32;
    case 8: return isSigned ? DataType::Int64 : DataType::Uint64;
    default: return DataType::Bytes;
  }
}

TypeMapping namedMapping(const NamedType &n, int size) {
  DataType type = DataType::Bytes;
  if (n.kind == NamedType::Signed || n.kind == NamedType::Unsigned)
    type = integerType(size, n.kind == NamedType::Signed);
  else if (n.kind == NamedType::Float && (size == 4 || size == 8))
    type = size == 4 ? DataType::Float32 : DataType::Float64;
  return {type, size_t(size)};
}

}  // namespace

namespace {

// ---- Every other predefined type: classified from MPI's description -------

// Which bytes of one element MPI writes: unpack one packed element into two
// buffers poisoned differently; a byte is data when MPI wrote it in both.
bool probeLayout(MPI_Datatype dt, size_t extent, TypeLayout *layout, std::string *why) {
  std::vector<unsigned char> src(extent, 0xA5), packed(extent + 64), low(extent, 0x00), high(extent, 0xFF);
  int packedSize = 0, pos = 0;
  if (MPI_Pack_size(1, dt, MPI_COMM_SELF, &packedSize) != MPI_SUCCESS || size_t(packedSize) > packed.size() ||
      MPI_Pack(src.data(), 1, dt, packed.data(), packedSize, &pos, MPI_COMM_SELF) != MPI_SUCCESS) {
    *why = "a predefined type MPI_Pack refused (its layout cannot be learnt)";
    return false;
  }
  const int used = pos;
  for (unsigned char *into : {low.data(), high.data()}) {
    pos = 0;
    if (MPI_Unpack(packed.data(), used, &pos, into, 1, dt, MPI_COMM_SELF) != MPI_SUCCESS) {
      *why = "a predefined type MPI_Unpack refused (its layout cannot be learnt)";
      return false;
    }
  }
  layout->nblocks = 0;
  for (size_t b = 0; b < extent;) {
    if (low[b] == 0x00 || high[b] == 0xFF) {  // untouched in one of them: a gap
      ++b;
      continue;
    }
    size_t e = b;
    while (e < extent && low[e] != 0x00 && high[e] != 0xFF) ++e;
    if (layout->nblocks == TypeLayout::kMaxBlocks) {
      *why = "a predefined type with more than 4 separate data blocks (Chorus cannot move it as MPI does)";
      return false;
    }
    layout->blocks[layout->nblocks++] = {uint32_t(b), uint32_t(e - b)};
    b = e;
  }
  return true;
}

// MINLOC/MAXLOC pair types, accepted for reductions only when MPI lays them
// out exactly as the LocPair the functors use.
template <typename Pair>
bool sameLayoutAsPair(size_t extent, const TypeLayout *gaps) {
  if (extent != sizeof(Pair)) return false;
  using V = decltype(Pair::value);
  using I = decltype(Pair::index);
  TypeLayout want;
  want.blocks[want.nblocks++] = {uint32_t(offsetof(Pair, value)), uint32_t(sizeof(V))};
  if (offsetof(Pair, index) == sizeof(V))  // adjacent fields read as one block
    want.blocks[0].length += uint32_t(sizeof(I));
  else
    want.blocks[want.nblocks++] = {uint32_t(offsetof(Pair, index)), uint32_t(sizeof(I))};
  if (!gaps) return want.nblocks == 1 && want.blocks[0].offset == 0 && want.blocks[0].length == extent;
  if (gaps->nblocks != want.nblocks) return false;
  for (int i = 0; i < want.nblocks; ++i)
    if (gaps->blocks[i].offset != want.blocks[i].offset || gaps->blocks[i].length != want.blocks[i].length)
      return false;
  return true;
}

DataType pairTypeOf(MPI_Datatype dt, size_t extent, const TypeLayout *gaps) {
  struct Row {
    MPI_Datatype handle;
    DataType type;
    bool (*matches)(size_t, const TypeLayout *);
  };
  const Row rows[] = {
      {MPI_FLOAT_INT, DataType::FloatInt, sameLayoutAsPair<FloatIntPair>},
      {MPI_DOUBLE_INT, DataType::DoubleInt, sameLayoutAsPair<DoubleIntPair>},
      {MPI_LONG_INT, DataType::LongInt, sameLayoutAsPair<LongIntPair>},
      {MPI_SHORT_INT, DataType::ShortInt, sameLayoutAsPair<ShortIntPair>},
      {MPI_2INT, DataType::IntInt, sameLayoutAsPair<IntIntPair>},
      {MPI_2INTEGER, DataType::IntInt, sameLayoutAsPair<IntIntPair>},
      {MPI_2REAL, DataType::FloatFloat, sameLayoutAsPair<FloatFloatPair>},
      {MPI_2DOUBLE_PRECISION, DataType::DoubleDouble, sameLayoutAsPair<DoubleDoublePair>},
  };
  for (const Row &r : rows)
    if (r.handle != MPI_DATATYPE_NULL && dt == r.handle) return r.matches(extent, gaps) ? r.type : DataType::Bytes;
  return DataType::Bytes;
}

// Integer types MPI reduces but the hot table leaves out (Fortran's sized
// integers), the logical types, which take the logical ops only, and the
// complex types whose parts are float or double (MPI_SUM only).
void reducibleAs(MPI_Datatype dt, size_t extent, TypeMapping *m) {
  const MPI_Datatype integers[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
  for (MPI_Datatype t : integers)
    if (t != MPI_DATATYPE_NULL && dt == t) m->type = integerType(int(extent), true);
  const MPI_Datatype complexes[] = {MPI_C_COMPLEX,     MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                    MPI_CXX_FLOAT_COMPLEX, MPI_CXX_DOUBLE_COMPLEX, MPI_COMPLEX,
                                    MPI_DOUBLE_COMPLEX, MPI_COMPLEX8,        MPI_COMPLEX16};
  for (MPI_Datatype t : complexes)
    if (t != MPI_DATATYPE_NULL && dt == t && (extent == 8 || extent == 16))
      m->complexPart = extent == 8 ? DataType::Float32 : DataType::Float64;
  const MPI_Datatype logicals[] = {MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL};
  for (MPI_Datatype t : logicals)
    if (t != MPI_DATATYPE_NULL && dt == t) {
      m->type = integerType(int(extent), false);
      m->logicalOnly = m->type != DataType::Bytes;
    }
}

bool classifyPredefined(MPI_Datatype dt, TypeMapping *out, TypeLayout *layout, std::string *why) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  if (MPI_Type_size(dt, &size) != MPI_SUCCESS || MPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS) {
    *why = "a predefined type whose size or extent MPI does not report";
    return false;
  }
  if (size <= 0) {
    *why = "a predefined type without data (size " + std::to_string(size) + ")";
    return false;
  }
  if (lb != 0 || extent < size) {
    *why = "a predefined type with lower bound " + std::to_string(lb) + " and extent " + std::to_string(extent) +
           " (Chorus moves types whose data starts at their address)";
    return false;
  }
  *out = TypeMapping{DataType::Bytes, size_t(extent)};
  if (extent > size) {
    if (!probeLayout(dt, size_t(extent), layout, why)) return false;
    size_t data = 0;
    for (int i = 0; i < layout->nblocks; ++i) data += layout->blocks[i].length;
    if (data != size_t(size)) {
      *why = "a predefined type whose packed bytes (" + std::to_string(data) + ") differ from its size (" +
             std::to_string(size) + ")";
      return false;
    }
    out->gaps = layout;
  }
  out->type = pairTypeOf(dt, out->size, out->gaps);
  if (out->type == DataType::Bytes && !out->gaps) reducibleAs(dt, out->size, out);
  return true;
}

// Classified once per handle (predefined handles live as long as MPI), read
// without a lock: `count` is published after its entry is written.
struct ClassifiedCache {
  static constexpr int kCapacity = 128;  // MPI-3.1 has about 70 predefined types
  struct Entry {
    MPI_Datatype handle;
    TypeMapping mapping;
    TypeLayout layout;
    bool accepted;
    std::string why;
  } entries[kCapacity];
  std::atomic<int> count{0};
  std::mutex insert;
};

ClassifiedCache &classifiedCache() {
  static ClassifiedCache c;
  return c;
}

}  // namespace

thread_local LastPredefinedType t_lastPredefinedType __attribute__((tls_model("initial-exec")));

bool mapDatatype(MPI_Datatype dt, TypeMapping *out, std::string *why) {
  if (dt == MPI_DATATYPE_NULL) {
    *why = "the null handle, not a datatype";
    return false;
  }
  for (NamedType &named : namedTypes())
    if (named.handle == dt) {
      int size = named.size.load(std::memory_order_relaxed);
      if (size == 0) {
        MPI_Aint lb = 0, extent = 0;
        MPI_Type_size(dt, &size);
        MPI_Type_get_extent(dt, &lb, &extent);
        if (lb != 0 || extent != size) size = -1;
        named.size.store(size, std::memory_order_relaxed);
      }
      if (size < 0) break;
      *out = namedMapping(named, size);
      t_lastPredefinedType = {true, dt, out->type, out->size};
      return true;
    }
  CustomHandles &h = ensureHandles();
  const struct { MPI_Datatype handle; DataType type; } custom[] = {
      {h.float16, DataType::Float16}, {h.bfloat16, DataType::BFloat16},
      {h.e4m3, DataType::Fp8E4M3}, {h.e5m2, DataType::Fp8E5M2}};
  for (const auto &c : custom)
    if (dt == c.handle) {
      *out = {c.type, dataTypeSize(c.type)};
      return true;
    }
  ClassifiedCache &cache = classifiedCache();
  // 1: accepted, 0: refused (why set), -1: not classified yet.
  auto lookup = [&](int n) -> int {
    for (int i = 0; i < n; ++i) {
      const ClassifiedCache::Entry &e = cache.entries[i];
      if (e.handle != dt) continue;
      if (!e.accepted) {
        *why = e.why;
        return 0;
      }
      *out = e.mapping;
      if (out->gaps) out->gaps = &e.layout;
      return 1;
    }
    return -1;
  };
  int found = lookup(cache.count.load(std::memory_order_acquire));
  if (found >= 0) return found == 1;
  int nints, naddrs, ntypes, combiner;
  if (MPI_Type_get_envelope(dt, &nints, &naddrs, &ntypes, &combiner) != MPI_SUCCESS) {
    *why = "not a valid datatype handle";
    return false;
  }
  if (combiner != MPI_COMBINER_NAMED) {
    *why = "a derived datatype (Chorus takes MPI's predefined types and its own MPIX_GPU_* types)";
    return false;
  }
  std::lock_guard<std::mutex> lock(cache.insert);
  const int n = cache.count.load(std::memory_order_relaxed);
  found = lookup(n);
  if (found >= 0) return found == 1;
  if (n == ClassifiedCache::kCapacity) {
    *why = "one predefined type too many for Chorus's type cache";
    return false;
  }
  ClassifiedCache::Entry &e = cache.entries[n];
  e.handle = dt;
  e.accepted = classifyPredefined(dt, &e.mapping, &e.layout, &e.why);
  cache.count.store(n + 1, std::memory_order_release);
  return lookup(n + 1) == 1;
}

bool mapOp(MPI_Op op, RedOp *out, const char **why) {
  if (op == MPI_OP_NULL) {
    *why = "the null handle, not an operation";
    return false;
  }
  // Built once: predefined handles never change within a process.
  static const struct { MPI_Op handle; RedOp op; } known[] = {
      {MPI_SUM, RedOp::Sum},   {MPI_PROD, RedOp::Prod}, {MPI_MIN, RedOp::Min},  {MPI_MAX, RedOp::Max},
      {MPI_LAND, RedOp::LAnd}, {MPI_LOR, RedOp::LOr},   {MPI_LXOR, RedOp::LXor}, {MPI_BAND, RedOp::BAnd},
      {MPI_BOR, RedOp::BOr},   {MPI_BXOR, RedOp::BXor}, {MPI_MINLOC, RedOp::MinLoc}, {MPI_MAXLOC, RedOp::MaxLoc}};
  for (const auto &k : known)
    if (op == k.handle) {
      *out = k.op;
      return true;
    }
  if (op == ensureHandles().avg) {
    *out = RedOp::Avg;
    return true;
  }
  *why = "a user-defined or unsupported op (Chorus takes MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, the logical and "
         "bitwise ops, MPI_MINLOC, MPI_MAXLOC and MPIX_GPU_AVG)";
  return false;
}

std::string datatypeLabel(MPI_Datatype dt) {
  if (dt == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  char name[MPI_MAX_OBJECT_NAME] = "";
  int len = 0;
  if (MPI_Type_get_name(dt, name, &len) == MPI_SUCCESS && len > 0) return name;
  return "(unnamed datatype)";
}

std::string opLabel(MPI_Op op) {
  const struct { MPI_Op handle; const char *name; } known[] = {
      {MPI_OP_NULL, "MPI_OP_NULL"}, {MPI_SUM, "MPI_SUM"},   {MPI_PROD, "MPI_PROD"}, {MPI_MIN, "MPI_MIN"},
      {MPI_MAX, "MPI_MAX"},         {MPI_LAND, "MPI_LAND"}, {MPI_LOR, "MPI_LOR"},   {MPI_LXOR, "MPI_LXOR"},
      {MPI_BAND, "MPI_BAND"},       {MPI_BOR, "MPI_BOR"},   {MPI_BXOR, "MPI_BXOR"}, {MPI_MAXLOC, "MPI_MAXLOC"},
      {MPI_MINLOC, "MPI_MINLOC"},   {MPI_REPLACE, "MPI_REPLACE"}};
  for (const auto &k : known)
    if (op == k.handle) return k.name;
  if (op == handles().avg && op != MPI_OP_NULL) return "MPIX_GPU_AVG";
  return "a user-defined op";
}

}  // namespace chorus

extern "C" {
MPI_Datatype MPIX_Gpu_type_float16(void) { return chorus::ensureHandles().float16; }
MPI_Datatype MPIX_Gpu_type_bfloat16(void) { return chorus::ensureHandles().bfloat16; }
MPI_Datatype MPIX_Gpu_type_fp8_e4m3(void) { return chorus::ensureHandles().e4m3; }
MPI_Datatype MPIX_Gpu_type_fp8_e5m2(void) { return chorus::ensureHandles().e5m2; }
MPI_Op MPIX_Gpu_op_avg(void) { return chorus::ensureHandles().avg; }
}
