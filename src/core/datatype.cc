// Sizes, names and the valid (type, op) matrix of Chorus's element types.
#include "core/datatype.h"

#include <cstring>

namespace chorus {

size_t dataTypeSize(DataType t) {
  switch (t) {
    case DataType::Int8:
    case DataType::Uint8:
    case DataType::Fp8E4M3:
    case DataType::Fp8E5M2:
    case DataType::Bytes:  // counted in bytes
      return 1;
    case DataType::Int16:
    case DataType::Uint16:
    case DataType::Float16:
    case DataType::BFloat16:
      return 2;
    case DataType::Int32:
    case DataType::Uint32:
    case DataType::Float32:
      return 4;
    case DataType::Int64:
    case DataType::Uint64:
    case DataType::Float64:
    case DataType::FloatInt:
    case DataType::IntInt:
    case DataType::FloatFloat:
    case DataType::ShortInt:  // short, 2 bytes of padding, int
      return 8;
    case DataType::DoubleInt:
    case DataType::LongInt:
    case DataType::DoubleDouble:
      return 16;
    case DataType::Count:
      break;
  }
  return 0;
}

const char *dataTypeName(DataType t) {
  switch (t) {
    case DataType::Int8: return "int8";
    case DataType::Uint8: return "uint8";
    case DataType::Int16: return "int16";
    case DataType::Uint16: return "uint16";
    case DataType::Int32: return "int32";
    case DataType::Uint32: return "uint32";
    case DataType::Int64: return "int64";
    case DataType::Uint64: return "uint64";
    case DataType::Float16: return "float16";
    case DataType::BFloat16: return "bfloat16";
    case DataType::Fp8E4M3: return "fp8_e4m3";
    case DataType::Fp8E5M2: return "fp8_e5m2";
    case DataType::Float32: return "float32";
    case DataType::Float64: return "float64";
    case DataType::FloatInt: return "float_int";
    case DataType::DoubleInt: return "double_int";
    case DataType::LongInt: return "long_int";
    case DataType::ShortInt: return "short_int";
    case DataType::IntInt: return "int_int";
    case DataType::FloatFloat: return "float_float";
    case DataType::DoubleDouble: return "double_double";
    case DataType::Bytes: return "bytes";
    case DataType::Count: break;
  }
  return "unknown";
}

const char *redOpName(RedOp op) {
  switch (op) {
    case RedOp::Sum: return "sum";
    case RedOp::Prod: return "prod";
    case RedOp::Min: return "min";
    case RedOp::Max: return "max";
    case RedOp::Avg: return "avg";
    case RedOp::LAnd: return "land";
    case RedOp::LOr: return "lor";
    case RedOp::LXor: return "lxor";
    case RedOp::BAnd: return "band";
    case RedOp::BOr: return "bor";
    case RedOp::BXor: return "bxor";
    case RedOp::MinLoc: return "minloc";
    case RedOp::MaxLoc: return "maxloc";
    case RedOp::Count: break;
  }
  return "unknown";
}

bool isValidTypeOp(DataType t, RedOp op) {
  if (t >= DataType::Bytes || op >= RedOp::Count) return false;  // Bytes is never reduced
  if (isPairType(t) || isLocOp(op)) return isPairType(t) && isLocOp(op);
  if (isBitwiseOp(op)) return isIntegerType(t);  // logical and bitwise ops
  return true;                                   // sum..avg: every numeric type
}

void copyDataBlocks(const void *from, void *to, size_t count, size_t extent, const TypeLayout &layout) {
  const char *src = static_cast<const char *>(from);
  char *dst = static_cast<char *>(to);
  for (size_t i = 0; i < count; ++i, src += extent, dst += extent)
    for (int b = 0; b < layout.nblocks; ++b)
      memcpy(dst + layout.blocks[b].offset, src + layout.blocks[b].offset, layout.blocks[b].length);
}

}  // namespace chorus
