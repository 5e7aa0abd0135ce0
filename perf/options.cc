// Flag parsing and the usage message.
#include "options.h"

#include <getopt.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace perf {
namespace {

// "64", "8K", "64M", "1G" (powers of 1024; lower case accepted).
bool parseBytes(const char *s, size_t *out) {
  if (!s || !*s || *s == '-' || *s == '+') return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno || end == s) return false;
  unsigned shift = 0;
  switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; ++end; break;
    case 'm': case 'M': shift = 20; ++end; break;
    case 'g': case 'G': shift = 30; ++end; break;
    default: return false;
  }
  if (*end != '\0') return false;
  if (v > (std::numeric_limits<size_t>::max() >> shift)) return false;
  *out = size_t(v) << shift;
  return true;
}

// A decimal integer in [lo, hi].
bool parseInt(const char *s, long lo, long hi, long *out) {
  if (!s || !*s) return false;
  errno = 0;
  char *end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

std::string bad(char flag, const char *value, const char *expected) {
  return std::string("invalid value '") + (value ? value : "") + "' for -" + flag + ": expected " + expected;
}

const option kLongOptions[] = {
    {"minbytes", required_argument, nullptr, 'b'},
    {"maxbytes", required_argument, nullptr, 'e'},
    {"stepfactor", required_argument, nullptr, 'f'},
    {"stepbytes", required_argument, nullptr, 'i'},
    {"iters", required_argument, nullptr, 'n'},
    {"warmup_iters", required_argument, nullptr, 'w'},
    {"check", required_argument, nullptr, 'c'},
    {"inplace", required_argument, nullptr, 'I'},
    {"datatype", required_argument, nullptr, 'd'},
    {"op", required_argument, nullptr, 'o'},
    {"root", required_argument, nullptr, 'r'},
    {"memory", required_argument, nullptr, 'm'},
    {"json", required_argument, nullptr, 'J'},
    {"mpi", no_argument, nullptr, 'M'},
    {"sync", no_argument, nullptr, 'S'},
    {"own-barrier", no_argument, nullptr, 'B'},
    {"null", no_argument, nullptr, 'N'},
    {"help", no_argument, nullptr, 'h'},
    {nullptr, 0, nullptr, 0},
};

}  // namespace

bool parseOptions(int argc, char **argv, int nranks, Options *opt, std::string *error) {
  bool sawFactor = false, sawStep = false;
  long v = 0;
  opterr = 0;  // we print our own messages, on rank 0 only
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, ":b:e:f:i:n:w:c:I:d:o:r:m:J:h", kLongOptions, nullptr)) != -1) {
    switch (c) {
      case 'b':
        if (!parseBytes(optarg, &opt->minBytes)) return *error = bad('b', optarg, "bytes, e.g. 8, 64K, 1M, 2G"), false;
        break;
      case 'e':
        if (!parseBytes(optarg, &opt->maxBytes)) return *error = bad('e', optarg, "bytes, e.g. 8, 64K, 1M, 2G"), false;
        break;
      case 'f':
        if (!parseInt(optarg, 2, 1 << 20, &v)) return *error = bad('f', optarg, "an integer factor >= 2"), false;
        opt->stepFactor = size_t(v);
        sawFactor = true;
        break;
      case 'i':
        if (!parseBytes(optarg, &opt->stepBytes) || opt->stepBytes == 0)
          return *error = bad('i', optarg, "a positive increment in bytes"), false;
        sawStep = true;
        break;
      case 'n':
        if (!parseInt(optarg, 1, 1 << 30, &v)) return *error = bad('n', optarg, "an iteration count >= 1"), false;
        opt->iters = int(v);
        opt->itersGiven = true;
        break;
      case 'w':
        if (!parseInt(optarg, 0, 1 << 30, &v)) return *error = bad('w', optarg, "a warm-up count >= 0"), false;
        opt->warmup = int(v);
        break;
      case 'c':
        if (!parseInt(optarg, 0, 1, &v)) return *error = bad('c', optarg, "0 or 1"), false;
        opt->check = v == 1;
        break;
      case 'I':
        if (!parseInt(optarg, 0, 1, &v)) return *error = bad('I', optarg, "0 or 1"), false;
        opt->inPlace = v == 1;
        break;
      case 'd':
        if (!parseType(optarg, &opt->type)) return *error = bad('d', optarg, typeNames()), false;
        break;
      case 'o':
        if (!parseOp(optarg, &opt->op)) return *error = bad('o', optarg, opNames()), false;
        break;
      case 'r':
        if (!parseInt(optarg, 0, nranks - 1, &v))
          return *error = bad('r', optarg, ("a rank in [0, " + std::to_string(nranks - 1) + "]").c_str()), false;
        opt->root = int(v);
        break;
      case 'm':
        if (std::strcmp(optarg, "host") == 0) {
          opt->mem = MemKind::Host;
        } else if (std::strcmp(optarg, "device") == 0) {
          opt->mem = MemKind::Device;
        } else {
          return *error = bad('m', optarg, "host or device"), false;
        }
        break;
      case 'J':
        if (!*optarg) return *error = bad('J', optarg, "a file name"), false;
        opt->jsonPath = optarg;
        break;
      case 'M':
        opt->mpi = true;
        break;
      case 'S':
        opt->sync = true;
        break;
      case 'B':
        opt->ownBarrier = true;
        break;
      case 'N':
        opt->nullRun = true;
        break;
      case 'h':
        opt->help = true;
        break;
      case ':':
        *error = optopt ? std::string("option -") + char(optopt) + " needs a value"
                        : std::string("option ") + argv[optind - 1] + " needs a value";
        return false;
      default:
        // optopt names a bad short option; a bad long one is argv[optind-1].
        *error = optopt ? std::string("unknown option -") + char(optopt)
                        : std::string("unknown option ") + argv[optind - 1];
        return false;
    }
  }
  if (optind < argc) {
    *error = std::string("unexpected argument '") + argv[optind] + "'";
    return false;
  }
  if (sawFactor && sawStep) {
    *error = "-f (geometric steps) and -i (arithmetic steps) exclude each other";
    return false;
  }
  if (sawStep) opt->stepFactor = 0;
  if (opt->ownBarrier && !opt->sync) {
    *error = "--own-barrier chooses the barrier before each timed call, so it needs --sync";
    return false;
  }
  if (opt->nullRun && (!opt->mpi || opt->ownBarrier)) {
    *error = "--null times MPI against itself: it needs --mpi, and excludes --own-barrier";
    return false;
  }
  if (opt->minBytes > opt->maxBytes) {
    *error = "-b (" + std::to_string(opt->minBytes) + ") is larger than -e (" + std::to_string(opt->maxBytes) + ")";
    return false;
  }
  return true;
}

bool nextSize(const Options &opt, size_t *size) {
  const size_t s = *size;
  size_t next;
  if (opt.stepBytes) {
    next = s + opt.stepBytes;
  } else if (s == 0) {
    next = 1;  // geometric steps cannot leave 0
  } else if (s > std::numeric_limits<size_t>::max() / opt.stepFactor) {
    return false;
  } else {
    next = s * opt.stepFactor;
  }
  if (next <= s || next > opt.maxBytes) return false;
  *size = next;
  return true;
}

std::string usage(const char *tool) {
  std::string u;
  u += "usage: mpirun -np N ";
  u += tool;
  u += " [options]\n"
       "Times a Chorus collective (and, with --mpi, MPI's own) over a range of sizes.\n"
       "  -b, --minbytes BYTES      smallest size (default 8); K, M, G suffixes are powers of 1024\n"
       "  -e, --maxbytes BYTES      largest size (default 32M)\n"
       "  -f, --stepfactor N        multiply the size by N at each step (default 2)\n"
       "  -i, --stepbytes BYTES     add BYTES at each step instead (excludes -f)\n"
       "  -n, --iters N             timed iterations per size (default: at least 20, more for\n"
       "                            calls under 0.5 ms, up to 10 ms per library or 2000; the\n"
       "                            iters column gives the count each size ran)\n"
       "  -w, --warmup_iters N      untimed iterations per size first (default 20)\n"
       "  -c, --check 0|1           check the results (default 1)\n"
       "  -I, --inplace 0|1         also time the MPI_IN_PLACE form, where the collective has one (default 1)\n"
       "  -d, --datatype TYPE       ";
  u += typeNames();
  u += " (default float)\n"
       "  -o, --op OP               ";
  u += opNames();
  u += " (default sum; reductions only)\n"
       "  -r, --root RANK           root of reduce and broadcast (default 0)\n"
       "  -m, --memory host|device  where the buffers live (default host)\n"
       "      --mpi                 also time MPI's collective on the same buffers\n"
       "      --sync                a barrier before each timed call, which alone is timed (OSU style)\n"
       "      --own-barrier         with --sync: Chorus's calls after Chorus's barrier (as in an OSU run\n"
       "                            through libchorus_mpi.so), MPI's after MPI's; default: MPI_Barrier for both\n"
       "      --null                with --mpi: MPI's collective in Chorus's place too (an A/A run), so the\n"
       "                            ratio column shows the timing's own bias and spread for identical calls\n"
       "  -J, --json FILE           write the results as JSON to FILE\n"
       "  -h, --help                this message\n"
       "Sizes are per-rank buffer bytes for allreduce, reduce and broadcast, and the\n"
       "total over all ranks for allgather, reduce_scatter and alltoall.\n"
       "Exit status: 0 ok, 1 wrong results, 2 bad usage or setup, 3 a collective failed.\n";
  return u;
}

}  // namespace perf
