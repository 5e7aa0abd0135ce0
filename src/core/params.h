// The declarative table of CHORUS_* settings.  Each row: identifier, kind,
// scope, environment variable, default, accepted values, help.  chorus_info
// prints this table; params.cc parses it once, warning about bad values
// (naming the variable and the accepted values) and falling back to the
// default.
//
// Scope Agreed marks the settings that shape what travels between ranks:
// the algorithm and its crossovers (a rank running another algorithm than
// its peers reads their messages as its own: wrong results), the FIFO
// slots (each rank sizes its peers' segments from its own values), the
// GPU protocol and the call comparison (which sends a message of its own).
// Every communicator's set-up compares them across its ranks (a hash in the
// bootstrap exchange, comm/context.cc) and fails on every rank with an
// error naming the setting, the values and the ranks when they differ.
// CHORUS_CHECKSUM is agreed differently: any rank asking turns it on for all.
#pragma once

#include <cstdint>
#include <string>

namespace chorus {

enum class ParamKind { Choice, Integer, Size, List };
enum class ParamScope { Local, Agreed };

// X(id, kind, scope, env, default, accepted, help)
#define CHORUS_PARAM_TABLE(X)                                                                     \
  X(Algo, Choice, Agreed, "CHORUS_ALGO", "auto", "auto,ring,tree,direct,publish,hierarchical,recursive_doubling,pairwise,single_copy,bruck", \
    "Force the algorithm of every collective that has it (allreduce: ring|tree|direct|publish|"   \
    "hierarchical (several nodes of equal size)|recursive_doubling (host memory, a power of two " \
    "ranks); "                                                                                    \
    "reduce-scatter: ring|direct|recursive_doubling (halving); reduce: ring|direct|tree (several "  \
    "nodes); allgather: ring|direct|publish|recursive_doubling; bcast: ring|direct|publish|tree "   \
    "(several nodes); alltoall: pairwise|single_copy (host memory, one machine, where the kernel " \
    "lets ranks read each other's memory)|bruck (host memory; log2(n) rounds); barrier: direct "  \
    "(flat)). auto lets "                                                                         \
    "the planner choose by size.")                                                                \
  X(Proto, Choice, Agreed, "CHORUS_PROTO", "auto", "auto,simple,ll",                                      \
    "Force the GPU protocol: simple (bandwidth) or ll (latency). Host buffers always use simple.") \
  X(Reproducible, Choice, Agreed, "CHORUS_REPRODUCIBLE", "default", "default,exact",                    \
    "exact: MPI_SUM and MPIX_GPU_AVG on half, bfloat16, float and double (complex per part) give "  \
    "the exact sum rounded once, the same bits for any rank count, order, algorithm, layout or "   \
    "engine (chorus(7), Reproducible sums); other ops on floating types are refused. default: "   \
    "reproducible for a fixed communicator size, layout and algorithm.")                          \
  X(LLFlagBits, Integer, Agreed, "CHORUS_LL_FLAG_BITS", "32", "4..32",                                    \
    "Testing: bits of the message number the GPU LL protocol keeps in each line's flag. Fewer "  \
    "make the flags wrap within a short test (tests/gpu/ll-wrap.sh); LL then re-flags its slots " \
    "more often, which costs bandwidth. Every rank must set it alike.")                          \
  X(Debug, Choice, Local, "CHORUS_DEBUG", "WARN", "NONE,WARN,INFO,TRACE",                                \
    "Log level. WARN always names file:line and rank; INFO logs the set-up and a summary line "  \
    "per communicator at its release (the first line names the version and the library's file); " \
    "TRACE adds a line per call: which algorithm ran and why.")                                   \
  X(DebugSubsys, List, Local, "CHORUS_DEBUG_SUBSYS", "ALL", "ALL,INIT,COLL,TRANSPORT,TUNE,TOPO,NET,CUDA,STATS", \
    "Comma-separated subsystems whose INFO/TRACE lines are printed; ^ in front excludes them.")    \
  X(DebugFile, Choice, Local, "CHORUS_DEBUG_FILE", "", "",                                               \
    "Write logs to this file instead of stderr (appended to; never through a link nor into a "    \
    "file of another user); %h is replaced by the host name, %p by the pid, %r by the rank in "   \
    "MPI_COMM_WORLD (lines before the rank is known go to stderr).")                              \
  X(Timeout, Integer, Local, "CHORUS_TIMEOUT", "300", "0..86400",                                        \
    "Seconds a rank waits for a peer before the collective fails with an error naming the peer "  \
    "and step (0 waits forever).")                                                                \
  X(ShmSlotSize, Size, Agreed, "CHORUS_SHM_SLOT_SIZE", "256K", "4K..64M",                                 \
    "Bytes in one slot of a full shared-memory FIFO: the pipelining chunk of the ring, chain, "   \
    "tree, hierarchical and publish algorithms. Small FIFOs use min(this, 16K).")                 \
  X(ShmSlots, Integer, Agreed, "CHORUS_SHM_SLOTS", "4", "2..64",                                          \
    "Slots in each full FIFO: the publish ring and the FIFOs from the ring's previous rank, the " \
    "double binary tree's parents and children and the hierarchical groups' ring neighbours. "    \
    "FIFOs from every other peer are small: 2 slots (the one-shot, alltoall and barrier "         \
    "algorithms cut their messages to fit), unless full FIFOs on every link fit in 8 MiB per "    \
    "rank (up to 7 ranks with the defaults).")                                                    \
  X(DirectMaxBytes, Size, Agreed, "CHORUS_DIRECT_MAX_BYTES", "auto", "auto or 0..64M",                    \
    "Largest message (bytes per rank) for the one-shot direct algorithms; auto uses the "         \
    "measured crossover (host memory; chorus_sim's rules on a node with a core per rank, "        \
    "which setting this or CHORUS_TREE_MAX_BYTES turns off), or for device buffers on one "      \
    "node 1 MiB / (ranks - 1) (chorus_sim's crossover, halved).")                                 \
  X(TreeMaxBytes, Size, Agreed, "CHORUS_TREE_MAX_BYTES", "auto", "auto or 0..1G",                         \
    "Largest allreduce message for the double binary tree; larger ones use the ring.")           \
  X(SpinCount, Integer, Local, "CHORUS_SPIN_COUNT", "auto", "auto or 0..100000000",                      \
    "Polls before a waiting rank starts yielding the core. auto: many when every rank has a "     \
    "core, few when the node is oversubscribed.")                                                 \
  X(HostId, Choice, Local, "CHORUS_HOSTID", "", "",                                                      \
    "This process's node identity: ranks with equal values are one node (shared memory), others " \
    "talk over UCX. Empty: the host name and boot id. Set it per rank to force a layout, e.g. "   \
    "to play several nodes on one machine.")                                                     \
  X(TopoFile, Choice, Local, "CHORUS_TOPO_FILE", "", "",                                                 \
    "Read the node's hardware (NUMA domains, GPUs, NICs, PCIe tree, NVLink) from this hwloc XML " \
    "file instead of this machine, e.g. one written by CHORUS_TOPO_DUMP_FILE or lstopo on "       \
    "another machine. Rings and trees then follow that machine's hardware.")                     \
  X(TopoDumpFile, Choice, Local, "CHORUS_TOPO_DUMP_FILE", "", "",                                        \
    "Write the hardware topology Chorus reads (hwloc XML, I/O devices included) to this file, "   \
    "for CHORUS_TOPO_FILE elsewhere or to attach to a bug report. Mode 0600; a link, a file that " \
    "is not regular or another user's file at the path is refused with a warning.")              \
  X(TraceDepth, Integer, Local, "CHORUS_TRACE_DEPTH", "64", "0..1000000",                                \
    "Collectives each communicator's flight recorder keeps (0: none). The recorder is written "   \
    "to CHORUS_TRACE_FILE when a collective fails, on SIGUSR1 and on MPIX_Comm_gpu_trace_dump; "  \
    "chorus_trace reads the files of all ranks.")                                                 \
  X(TraceFile, Choice, Local, "CHORUS_TRACE_FILE", "/tmp/chorus-trace-%j-%h-%p.txt", "",                 \
    "Where this process writes its flight recorder (mode 0600; never through a link nor over a "  \
    "file of another user); %j is replaced by the job id (the launcher's, else agreed by the "    \
    "ranks), %h by the host name, %p by the pid, %r by the rank in MPI_COMM_WORLD.")             \
  X(Check, Integer, Agreed, "CHORUS_CHECK", "0", "0..1",                                                  \
    "1: before any data moves, compare every collective's call (collective, count, type, op, "    \
    "root, sequence number) across the communicator, and fail on every rank with an error naming "\
    "both calls when they differ. Costs one small MPI_Allreduce per call. Every rank must set it " \
    "alike.")                                                                                     \
  X(Stats, Integer, Local, "CHORUS_STATS", "0", "0..1",                                                  \
    "1: count calls, bytes, time and the algorithms chosen per communicator and collective, and " \
    "print them on stderr when the communicator's context is released (MPIX_Comm_gpu_free, "      \
    "MPI_Comm_free, MPI_Finalize).")                                                               \
  X(Interpose, Choice, Local, "CHORUS_INTERPOSE", "device", "device,all,off",                            \
    "Routing of libchorus_mpi.so (the MPI_* interposition library): device sends MPI "            \
    "collectives on device buffers to Chorus, all those on host buffers too, off sends "           \
    "everything to MPI. Calls Chorus does not support always go to MPI. Every rank must set it "   \
    "alike.")                                                                                      \
  X(NetProto, Choice, Local, "CHORUS_NET_PROTO", "auto", "auto,am,put",                                  \
    "How full FIFO slots travel to ranks on other nodes (UCX): put writes them straight into the " \
    "receiver's registered slot (zero copy) and sends a header-only notice behind a fence; am "   \
    "sends them as active messages (copied on both ends); auto puts slots of 16 KiB and more "    \
    "where UCX has an RMA lane to the peer (an RDMA NIC) and sends active messages where it would " \
    "emulate puts (tcp). Ranks may differ: each receiver takes both.")                            \
  X(NetConnect, Choice, Local, "CHORUS_NET_CONNECT", "lazy", "lazy,eager",                               \
    "When a rank links the ranks on other nodes (UCX endpoint, FIFO copies, registration): lazy "   \
    "on first use, so memory grows with the peers its algorithms touch (a ring two, a tree "       \
    "three, an alltoall all); eager all of them when the communicator is set up, so that no "       \
    "collective pays a connection. Ranks may differ.")                                             \
  X(NetDevice, Choice, Agreed, "CHORUS_NET_DEVICE", "kernels", "kernels,staged",                          \
    "How device buffers cross nodes: kernels runs the collective's own kernels, their FIFOs to "   \
    "other nodes in pinned host memory carried by a proxy thread over UCX (Simple protocol; "     \
    "CUDA graph capture works); staged copies the whole buffers to host memory and runs the "     \
    "host engine (the test oracle and fallback). Every rank must set it alike.")                  \
  X(NetDeviceLinks, Choice, Agreed, "CHORUS_NET_DEVICE_LINKS", "auto", "auto,every,streaming",            \
    "Which ranks on other nodes the device proxy links, on every channel, in pinned host memory "  \
    "(about 1 MiB per peer and channel): every one, or only those the kernels' streaming "         \
    "algorithms exchange with (rings, node trees, the hierarchy's rails: a handful whatever the "  \
    "scale), which plans device buffers across nodes without the one-shots and the rooted trees " \
    "and stages the alltoall through host memory; auto links every one while that takes at most " \
    "160 MiB a rank. Every rank must set it alike.")                                              \
  X(NetGdr, Choice, Agreed, "CHORUS_NET_GDR", "auto", "0,1,auto",                                          \
    "GPUDirect RDMA for device buffers across nodes (CHORUS_NET_DEVICE=kernels): the device "    \
    "links' slots in GPU memory registered with UCX, which the NIC reads and writes, instead of " \
    "pinned host memory. auto: only when UCX supports CUDA memory, a registration succeeds and "  \
    "the GPU's NIC is within CHORUS_NET_GDR_LEVEL, on every rank; 1: required (set-up fails "    \
    "where it cannot); 0: never. Every rank must set it alike.")                                   \
  X(NetGdrLevel, Choice, Local, "CHORUS_NET_GDR_LEVEL", "PXB", "PIX,PXB,PHB,SYS",                        \
    "The farthest PCIe path between a GPU and its NIC at which CHORUS_NET_GDR=auto uses "        \
    "GPUDirect RDMA: PIX one switch, PXB several switches below the CPU, PHB through the CPU's "  \
    "host bridge, SYS across sockets (NCCL_NET_GDR_LEVEL's classes).")                            \
  X(Checksum, Integer, Local, "CHORUS_CHECKSUM", "0", "0..1",                                            \
    "1: every message through a host FIFO (shared memory, UCX, publish rings) carries a checksum " \
    "that its receiver verifies; a corrupted one fails the collective with an error naming the "  \
    "link (sending rank -> receiving rank, message number) instead of giving a wrong answer. One " \
    "more pass over each message on both ends; device kernels do not checksum.")

enum class ParamId : int {
#define CHORUS_PARAM_ID(id, kind, scope, env, def, accepted, help) id,
  CHORUS_PARAM_TABLE(CHORUS_PARAM_ID)
#undef CHORUS_PARAM_ID
      Count
};

struct ParamSpec {
  ParamId id;
  ParamKind kind;
  ParamScope scope;
  const char *env;
  const char *defaultValue;
  const char *accepted;  // comma list for Choice/List, "lo..hi" range for Integer/Size
  const char *help;
};

// Parse every setting from the environment (idempotent; first call wins).
void paramsInit();

const ParamSpec &paramSpec(ParamId id);
// Integer and Size settings; "auto" reads as -1.
int64_t paramInt(ParamId id);
// Choice and List settings, as given (or the default when bad or unset).
const char *paramString(ParamId id);
// The raw environment value, or nullptr when unset.
const char *paramRaw(ParamId id);
// The effective value in one spelling for every way of writing it (a number
// for Integer and Size, "256K" and "262144" alike; choices in lower case):
// what the ranks compare for an Agreed setting.
std::string paramCanonical(ParamId id);

// Parse "64", "4K", "2M", "1G" (case-insensitive); false when malformed.
bool parseSize(const char *text, int64_t *out);

}  // namespace chorus
