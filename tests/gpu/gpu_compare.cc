// How the GPU tier compares and reports: a device result against its
// reference byte for byte, one verdict per case agreed by every rank, and
// the device buffers the cases reuse.
#include <algorithm>
#include <cstdio>

#include "gpu_suite.h"
#include "chorus.h"

namespace gpu_test {

// ---- checking -----------------------------------------------------------------------

std::string errorText(int rc) {
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return "error " + std::to_string(rc) + ": " + msg;
}

static std::string hexBytes(const char *p, size_t n) {
  std::string s;
  char b[4];
  for (size_t i = n; i-- > 0;) {  // most significant byte first
    snprintf(b, sizeof b, "%02x", unsigned(static_cast<unsigned char>(p[i])));
    s += b;
  }
  return s;
}

std::string firstDifference(const char *got, const char *want, size_t bytes, size_t origin, size_t resultBytes,
                            size_t elem, const char *what) {
  size_t i = 0;
  while (i < bytes && got[i] == want[i]) ++i;
  if (i == bytes) return "";
  char s[256];
  if (i < origin || i >= origin + resultBytes) {
    snprintf(s, sizeof s, "%s: byte %lld outside the result is 0x%02x, want 0x%02x", what,
             (long long)i - (long long)origin, unsigned(static_cast<unsigned char>(got[i])),
             unsigned(static_cast<unsigned char>(want[i])));
  } else {
    const size_t e = (i - origin) / elem, at = origin + e * elem;
    snprintf(s, sizeof s, "%s: element %zu is 0x%s, want 0x%s", what, e, hexBytes(got + at, elem).c_str(),
             hexBytes(want + at, elem).c_str());
  }
  return s;
}

void check(const std::string &label, const std::string &why) {
  ++g_checked;
  int bad = why.empty() ? 0 : 1, anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!anyBad) return;
  ++g_failed;
  if (g_failed > kMaxReported) return;
  if (bad) fprintf(stderr, "rank %d: %s: %s\n", g_rank, label.c_str(), why.c_str());
  if (g_rank == 0) printf("FAIL %s\n", label.c_str());
  if (g_rank == 0 && g_failed == kMaxReported) printf("(further failures are counted, not shown)\n");
  fflush(stdout);
}

char *DevBuf::get(size_t bytes) {
  if (bytes > cap) {
    if (p) CUDA_OK(cudaFree(p));
    cap = std::max(bytes, 2 * cap);
    CUDA_OK(cudaMalloc(&p, cap));
  }
  return p;
}
DevBuf g_send, g_recv;

void upload(char *d, const std::vector<char> &h) {
  if (!h.empty()) CUDA_OK(cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice));
}
std::vector<char> download(const char *d, size_t bytes) {
  std::vector<char> h(bytes);
  if (bytes) CUDA_OK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace gpu_test
