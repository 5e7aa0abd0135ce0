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
  // Lanes and words in named scalars: with arrays GCC kept them in memory
  // and the loop ran at 2.6 GB/s; so, 15 GB/s on 256 KiB in cache (memcpy
  // there: 25-45 GB/s), at memory speed on larger data.
  uint64_t a0 = 1, a1 = 2, a2 = 3, a3 = 4, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
  auto fold = [&](uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3) {
    a0 += w0, a1 += w1, a2 += w2, a3 += w3;
    b0 += a0, b1 += a1, b2 += a2, b3 += a3;
  };
  size_t off = 0;
  for (; off + 32 <= bytes; off += 32) {
    uint64_t w0, w1, w2, w3;  // memcpy: any alignment
    memcpy(&w0, p + off, 8), memcpy(&w1, p + off + 8, 8), memcpy(&w2, p + off + 16, 8), memcpy(&w3, p + off + 24, 8);
    fold(w0, w1, w2, w3);
  }
  if (off < bytes) {  // the tail, zero-padded; the length below tells padding from zeros
    uint64_t w[4] = {0, 0, 0, 0};
    memcpy(w, p + off, bytes - off);
    fold(w[0], w[1], w[2], w[3]);
  }
  uint64_t h = uint64_t(bytes) * 0x9e3779b97f4a7c15ull;
  const uint64_t lanes[8] = {a0, b0, a1, b1, a2, b2, a3, b3};
  for (uint64_t v : lanes) h = (h ^ v) * 0x100000001b3ull + (h >> 29);
  return h;
}

}  // namespace chorus
