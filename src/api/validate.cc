#include "api/validate.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "coll/exact_executor.h"
#include "comm/context.h"
#include "core/log.h"
#include "core/params.h"

namespace chorus {

thread_local ApiProbe t_probe __attribute__((tls_model("initial-exec")));
thread_local int t_apiDepth __attribute__((tls_model("initial-exec"))) = 0;

int ApiCall::fail(ErrorClass cls, const char *fmt, ...) {
  if (t_probe.active) {  // a probe only wants to know that Chorus would refuse
    code_ = MPI_ERR_OTHER;
    return code_;
  }
  char text[MPI_MAX_ERROR_STRING];
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  const int len = vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  // MPI_Error_string holds MPI_MAX_ERROR_STRING-1 characters of "name: text"
  // (the messages put what matters first): a longer one is cut there, and
  // logged whole.
  const size_t room = MPI_MAX_ERROR_STRING - 1 - std::min<size_t>(strlen(name_) + 2, 64);
  if (len > 0 && size_t(len) > room) {
    std::string full(size_t(len) + 1, '\0');
    vsnprintf(&full[0], full.size(), fmt, again);
    full.resize(size_t(len));
    CHORUS_WARN("%s: %s (MPI_Error_string has its first %zu characters)", name_, full.c_str(), room);
    text[room] = '\0';
  }
  va_end(again);
  code_ = raiseError(comm_, cls, "%s: %s", name_, text);
  return code_;
}

int ApiCall::failStatus(Status s, const char *detail) {
  return fail(errorClassOf(s), "%s", detail && *detail ? detail : statusName(s));
}

bool ApiCall::checkCommAfresh() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    // No error handler can run without MPI: just report.
    if (!t_probe.active)
      fprintf(stderr, "CHORUS: %s called %s\n", name_, initialized ? "after MPI_Finalize" : "before MPI_Init");
    code_ = MPI_ERR_OTHER;
    return false;
  }
  if (comm_ == MPI_COMM_NULL) {
    fail(ErrorClass::Argument, "comm = MPI_COMM_NULL is not a valid communicator");
    return false;
  }
  // A communicator with a context was checked when the context was made:
  // skip the intercommunicator test and the rank and size queries.
  if ((ctx_ = contextFind(comm_))) return adoptContext();
  int inter = 0;
  if (MPI_Comm_test_inter(comm_, &inter) != MPI_SUCCESS) {
    comm_ = MPI_COMM_NULL;
    fail(ErrorClass::Argument, "comm is not a valid communicator handle");
    return false;
  }
  if (inter) {
    fail(ErrorClass::Unsupported, "comm is an intercommunicator; Chorus supports intracommunicators only");
    return false;
  }
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  t_probe.commOk = true;
  return true;
}

bool ApiCall::failCount(const char *arg, MPI_Count count) {
  fail(ErrorClass::Argument, "%s = %lld is negative", arg, (long long)count);
  return false;
}

bool ApiCall::failRoot(int root) {
  fail(ErrorClass::Argument, "root = %d is not a rank of comm (size %d)", root, size_);
  return false;
}

bool ApiCall::checkTypeAfresh(const char *arg, MPI_Datatype dt, TypeMapping *out) {
  std::string why;
  if (mapDatatype(dt, out, &why)) return true;
  fail(ErrorClass::Argument, "%s = %s is %s", arg, datatypeLabel(dt).c_str(), why.c_str());
  return false;
}

bool ApiCall::checkReduction(MPI_Datatype dt, MPI_Op op, TypeMapping *type, RedOp *redop) {
  if (!checkType("datatype", dt, type)) return false;
  const char *why = "";
  if (!mapOp(op, redop, &why)) {
    if (quietRefusal()) return false;
    fail(ErrorClass::Argument, "op = %s is %s", opLabel(op).c_str(), why);
    return false;
  }
  // The exact mode takes no order-dependent reduction (checked only for
  // those, so the usual call pays nothing).
  if (const char *why = exactRefusal(type->type, *redop);
      why && (ctx_ ? ctx_->exactSums : !strcmp(paramString(ParamId::Reproducible), "exact"))) {
    if (quietRefusal()) return false;
    fail(ErrorClass::Unsupported,
         "op = %s on datatype = %s in the exact mode (CHORUS_REPRODUCIBLE=exact or the chorus_reproducible hint): %s",
         opLabel(op).c_str(), datatypeLabel(dt).c_str(), why);
    return false;
  }
  // MPI allows the bitwise ops on MPI_BYTE: treat it as uint8 for them.
  if (type->type == DataType::Bytes && type->size == 1 && dt == MPI_BYTE &&
      (*redop == RedOp::BAnd || *redop == RedOp::BOr || *redop == RedOp::BXor))
    type->type = DataType::Uint8;
  if (type->complexPart != DataType::Bytes && *redop == RedOp::Sum) {
    type->type = type->complexPart;
    type->components = 2;
  }
  if (isLocOp(*redop) && !isPairType(type->type)) {
    if (quietRefusal()) return false;
    fail(ErrorClass::Argument, "op = %s is not defined on datatype = %s (it takes MPI_2INT, MPI_FLOAT_INT, "
         "MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER)",
         opLabel(op).c_str(), datatypeLabel(dt).c_str());
    return false;
  }
  if (type->type == DataType::Bytes) {
    if (quietRefusal()) return false;
    fail(ErrorClass::Argument, "datatype = %s cannot be reduced (op = %s); reductions take integer and "
         "floating-point types, complex ones (MPI_SUM), and the MINLOC/MAXLOC pairs", datatypeLabel(dt).c_str(),
         opLabel(op).c_str());
    return false;
  }
  if (type->logicalOnly && *redop != RedOp::LAnd && *redop != RedOp::LOr && *redop != RedOp::LXor) {
    if (quietRefusal()) return false;
    fail(ErrorClass::Argument, "op = %s is not defined on datatype = %s (a logical type: MPI_LAND, MPI_LOR and "
         "MPI_LXOR only)", opLabel(op).c_str(), datatypeLabel(dt).c_str());
    return false;
  }
  if (!isValidTypeOp(type->type, *redop)) {
    if (quietRefusal()) return false;
    fail(ErrorClass::Argument, "op = %s is not defined on datatype = %s (%s)", opLabel(op).c_str(),
         datatypeLabel(dt).c_str(),
         isPairType(type->type) ? "the pair types take MPI_MINLOC and MPI_MAXLOC only"
                                : "logical and bitwise ops take integer types");
    return false;
  }
  return true;
}

bool ApiCall::failBuffer(const char *arg, MPI_Count count) {
  fail(ErrorClass::Argument, "%s = NULL with count = %lld", arg, (long long)count);
  return false;
}

bool ApiCall::failInPlace(const char *arg) {
  fail(ErrorClass::Argument, "%s = MPI_IN_PLACE is not allowed here", arg);
  return false;
}

bool ApiCall::failAliased(const void *buf) {
  fail(ErrorClass::Argument, "sendbuf = recvbuf = %p: the buffers must not be the same; for an in-place call pass "
       "MPI_IN_PLACE as sendbuf", buf);
  return false;
}

bool ApiCall::failBytes(MPI_Count count, size_t elemSize, int blocks) {
  fail(ErrorClass::Argument, "count = %lld elements of %zu bytes on %d ranks overflows the address space",
       (long long)count, elemSize, blocks);
  return false;
}

bool ApiCall::checkSameSignature(MPI_Count sendcount, MPI_Datatype sendtype, const TypeMapping &send,
                                 MPI_Count recvcount, MPI_Datatype recvtype, const TypeMapping &recv) {
  const bool sameType = sendtype == recvtype || (send.type != DataType::Bytes && !send.logicalOnly &&
                                                 !recv.logicalOnly && send.type == recv.type && send.size == recv.size);
  if (!sameType) {
    fail(ErrorClass::Argument, "sendtype = %s does not match recvtype = %s", datatypeLabel(sendtype).c_str(),
         datatypeLabel(recvtype).c_str());
    return false;
  }
  if (sendcount != recvcount) {
    fail(ErrorClass::Argument, "sendcount = %lld does not match recvcount = %lld", (long long)sendcount,
         (long long)recvcount);
    return false;
  }
  return true;
}

}  // namespace chorus
