// End-to-end checksums of FIFO messages (CHORUS_CHECKSUM=1).  The sender
// sums each message as it posts it and the receiver sums it again before
// folding it in: a slot corrupted anywhere on the way (a stray write into
// shared memory, a bad NIC or bounce buffer across nodes) becomes an error
// naming the link instead of a wrong answer.
//
// Fletcher-style, on 64-bit words in four independent lanes: only adds, so
// it streams at memory speed, and any change to one word changes the first
// sum of its lane while swapped words change the second.  It detects
// accidents, not an adversary (who could write the checksum as well).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace chorus {

inline uint64_t messageChecksum(const void *data, size_t bytes) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint64_t a[4] = {1, 2, 3, 4}, b[4] = {0, 0, 0, 0};
  size_t off = 0;
  for (; off + 32 <= bytes; off += 32) {
    uint64_t w[4];
    memcpy(w, p + off, sizeof w);  // slots and staging are aligned; memcpy keeps it legal for any pointer
    for (int l = 0; l < 4; ++l) {
      a[l] += w[l];
      b[l] += a[l];
    }
  }
  if (off < bytes) {  // the tail, zero-padded; the length below tells padding from zeros
    uint64_t w[4] = {0, 0, 0, 0};
    memcpy(w, p + off, bytes - off);
    for (int l = 0; l < 4; ++l) {
      a[l] += w[l];
      b[l] += a[l];
    }
  }
  uint64_t h = uint64_t(bytes) * 0x9e3779b97f4a7c15ull;
  for (int l = 0; l < 4; ++l) h = (h ^ a[l]) * 0x100000001b3ull + (b[l] ^ (b[l] >> 29));
  return h;
}

}  // namespace chorus
