// A process outside the job that attacks a rank's UCX port (test_netfaults):
//
//   net_forger ADDRESS_FILE
//
// reads the rank's UCX worker address (written by the rank), connects to it
// as any local process could, and sends messages in the transport's own
// format (ucx_wire.h) that lack the communicator's token: data with a
// plausible header, data claiming 4096 inline lines (which once made a
// receiver copy past its slot), a short header, a credit, a credit
// request, and a data message with token 0.  Once UCX says every one has
// left this process it creates ADDRESS_FILE.sent, disconnects and exits 0;
// 2 on any UCX failure, 3 after 20 s.
// Prints the number sent.
#include <time.h>
#include <unistd.h>
#include <ucp/api/ucp.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "transport/ucx/ucx_wire.h"

namespace {

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

bool wait(ucp_worker_h worker, ucs_status_ptr_t req, double deadline) {
  if (UCS_PTR_IS_ERR(req)) return false;
  if (!req) return true;
  ucs_status_t s;
  while ((s = ucp_request_check_status(req)) == UCS_INPROGRESS && now() < deadline) ucp_worker_progress(worker);
  ucp_request_free(req);
  return s == UCS_OK;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: net_forger ADDRESS_FILE\n");
    return 99;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<char> address((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (address.empty()) {
    fprintf(stderr, "net_forger: no address in %s\n", argv[1]);
    return 2;
  }
  ucp_params_t params = {};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM;
  ucp_context_h context;
  ucp_worker_h worker;
  ucp_ep_h ep;
  if (ucp_init(&params, nullptr, &context) != UCS_OK) return 2;
  ucp_worker_params_t wp = {};
  if (ucp_worker_create(context, &wp, &worker) != UCS_OK) return 2;
  ucp_ep_params_t ep_params = {};
  ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  ep_params.address = reinterpret_cast<const ucp_address_t *>(address.data());
  if (ucp_ep_create(worker, &ep_params, &ep) != UCS_OK) return 2;

  using chorus::NetHeader;
  std::vector<char> payload(4096 * 64, 'X');
  const NetHeader plausible{0x1234567890abcdefull, 0, 0, 0, 0, 0, 0};
  NetHeader hugeLines = plausible;
  hugeLines.lines = 4096;
  NetHeader zeroToken = plausible;
  zeroToken.token = 0;
  struct Forged {
    unsigned id;
    const void *header;
    size_t headerBytes;
    size_t payloadBytes;
  } forged[] = {
      {chorus::kAmData, &plausible, sizeof plausible, 4000},
      {chorus::kAmData, &hugeLines, sizeof hugeLines, payload.size()},
      {chorus::kAmData, &plausible, 7, 64},
      {chorus::kAmCredit, &plausible, sizeof plausible, 0},
      {chorus::kAmCreditWanted, &plausible, sizeof plausible, 0},
      {chorus::kAmData, &zeroToken, sizeof zeroToken, 64},
  };
  const double deadline = now() + 20;
  int sent = 0;
  for (const Forged &f : forged) {
    ucp_request_param_t param = {};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_AM_SEND_FLAG_EAGER;
    if (!wait(worker, ucp_am_send_nbx(ep, f.id, f.header, f.headerBytes, payload.data(), f.payloadBytes, &param),
              deadline)) {
      fprintf(stderr, "net_forger: send %d failed or timed out\n", sent);
      return now() < deadline ? 2 : 3;
    }
    ++sent;
  }
  ucp_request_param_t param = {};
  if (!wait(worker, ucp_ep_flush_nbx(ep, &param), deadline)) return now() < deadline ? 2 : 3;
  printf("%d\n", sent);
  fflush(stdout);
  const std::string file(argv[1]);
  if (FILE *f = fopen((file + ".sent").c_str(), "w")) fclose(f);
  else return 2;
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  wait(worker, ucp_ep_close_nbx(ep, &param), now() + 5);
  ucp_worker_destroy(worker);
  ucp_cleanup(context);
  return 0;
}
