// chorus_info - what this Chorus build is and what it would do here.
//
// Prints the library version, the build configuration (MPI library, CUDA and
// its gencodes, UCX, hwloc), every CHORUS_* setting of src/core/params.h with
// its default, current value and help, and the node's topology as hwloc sees
// it.  Runs without mpirun (MPI singleton); see man/chorus_info.1.  With
// --topo it prints instead what Chorus reads of the node (CHORUS_TOPO_FILE
// or this machine) and the rings and trees it would build (topo_print.cc).
#include <dlfcn.h>
#include <hwloc.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "api/predefined_types.h"
#include "chorus.h"
#include "core/params.h"
#include "cuda/memtype.h"
#include "topo_print.h"

namespace {

constexpr int kWidth = 78;  // wrap help text to this many columns

void usage(FILE *out) {
  fprintf(out,
          "Usage: chorus_info [-h] [-V] [-s] [-d]\n"
          "       chorus_info -t|--topo [--json] [--layout N[xM]] [--channels C]\n"
          "Print the Chorus version, build configuration, GPU runtime state, CHORUS_*\n"
          "settings, node topology and datatypes.  Runs without mpirun.\n"
          "  -s  settings only\n"
          "  -d  datatypes only: what each predefined MPI type does in Chorus\n"
          "  -V, --version   the version and build, then exit\n"
          "  -h, --help      this help\n"
          "  -t, --topo      the GPUs, NICs, rings and trees Chorus sees and builds\n"
          "                  (honours CHORUS_TOPO_FILE)\n"
          "  --json          with --topo: as JSON\n"
          "  --layout N[xM]  with --topo: N nodes of M ranks (default: 1 node, one\n"
          "                  rank per GPU, or per NUMA domain without GPUs)\n"
          "  --channels C    with --topo: rings to build (default: one per NIC, >= 2)\n");
}

// Print `text` wrapped at kWidth after `indent` spaces.
void printWrapped(const char *text, int indent) {
  std::string line;
  const char *p = text;
  while (*p) {
    while (*p == ' ') ++p;
    const char *end = p;
    while (*end && *end != ' ') ++end;
    std::string word(p, end - p);
    if (!line.empty() && indent + line.size() + 1 + word.size() > static_cast<size_t>(kWidth)) {
      printf("%*s%s\n", indent, "", line.c_str());
      line.clear();
    }
    if (!word.empty()) line += (line.empty() ? "" : " ") + word;
    p = end;
  }
  if (!line.empty()) printf("%*s%s\n", indent, "", line.c_str());
}

const char *kindName(const chorus::ParamSpec &spec) {
  switch (spec.kind) {
    case chorus::ParamKind::Choice: return *spec.accepted ? "choice" : "string";
    case chorus::ParamKind::Integer: return "integer";
    case chorus::ParamKind::Size: return "size";
    case chorus::ParamKind::List: return "list";
  }
  return "?";
}

// What this process finds at run time, which the build alone does not say:
// a CUDA build on a machine without a driver runs on host buffers only.
void printGpuRuntime() {
  void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  const char *state = driver ? "present (libcuda.so.1)" : "absent (no libcuda.so.1)";
#ifdef CHORUS_HAVE_CUDA
  printf("#   CUDA driver : %s; %s\n", state,
         chorus::cudaAvailable() ? "a GPU is usable: device buffers run on it"
                                 : "no usable GPU: a device buffer is refused with an error");
#else
  printf("#   CUDA driver : %s; this build has no CUDA executor: a device buffer is refused with an error\n", state);
#endif
  if (driver) dlclose(driver);
}

void printBuild() {
  printf("# %s\n", MPIX_Gpu_version_string());
  printf("#\n# Build\n");

  char mpiVersion[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int length = 0;
  MPI_Get_library_version(mpiVersion, &length);
  // Open MPI's string spans several lines; the first says enough.
  if (char *nl = strchr(mpiVersion, '\n')) *nl = '\0';
  printf("#   MPI library : %s\n", mpiVersion);
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  printf("#   MPI standard: %d.%d\n", major, minor);

#ifdef CHORUS_HAVE_CUDA
#ifdef CHORUS_NVCC_GENCODE
  printf("#   CUDA        : yes (%s)\n", CHORUS_NVCC_GENCODE);
#else
  printf("#   CUDA        : yes\n");
#endif
#else
  printf("#   CUDA        : no (host buffers only)\n");
#endif
  printGpuRuntime();
#ifdef CHORUS_HAVE_UCX
  printf("#   UCX         : yes (inter-node transport)\n");
#else
  printf("#   UCX         : no (single node only)\n");
#endif
  unsigned v = hwloc_get_api_version();
  printf("#   hwloc API   : %u.%u.%u at run time, %u.%u.%u at build time\n", v >> 16, (v >> 8) & 0xff,
         v & 0xff, HWLOC_API_VERSION >> 16, (HWLOC_API_VERSION >> 8) & 0xff, HWLOC_API_VERSION & 0xff);
}

void printSettings() {
  chorus::paramsInit();  // warns about bad values, naming the variable
  printf("#\n# Settings (environment variables)\n");
  for (int i = 0; i < static_cast<int>(chorus::ParamId::Count); ++i) {
    auto id = static_cast<chorus::ParamId>(i);
    const chorus::ParamSpec &spec = chorus::paramSpec(id);
    const char *raw = chorus::paramRaw(id);
    const char *value = chorus::paramString(id);
    printf("%s=%s\n", spec.env, value);
    std::string meta = std::string("[") + kindName(spec) + "; default \"" + spec.defaultValue + "\"";
    if (*spec.accepted) meta += std::string("; accepted: ") + spec.accepted;
    if (raw && *raw) {
      meta += strcmp(raw, value) == 0 ? "; set in the environment" : "; environment value is invalid";
    }
    meta += "]";
    printWrapped(meta.c_str(), 4);
    printWrapped(spec.help, 4);
  }
}

// The PCI device an OS device hangs off, or the OS device itself.
hwloc_obj_t pciParent(hwloc_obj_t osdev) {
  for (hwloc_obj_t o = osdev->parent; o; o = o->parent)
    if (o->type == HWLOC_OBJ_PCI_DEVICE) return o;
  return osdev;
}

struct DeviceList {
  std::set<hwloc_obj_t> devices;  // one entry per PCI device
  std::string names;
  void add(hwloc_obj_t osdev) {
    devices.insert(pciParent(osdev));
    if (!names.empty()) names += ' ';
    names += osdev->name ? osdev->name : "?";
  }
};

void printTopology() {
  printf("#\n# Topology (hwloc)\n");
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) {
    printf("#   unavailable: hwloc_topology_init failed\n");
    return;
  }
#if HWLOC_API_VERSION >= 0x00020000
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
#else
  hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_IO_DEVICES);
#endif
  if (hwloc_topology_load(topo) != 0) {
    printf("#   unavailable: hwloc_topology_load failed\n");
    hwloc_topology_destroy(topo);
    return;
  }
  auto count = [&](hwloc_obj_type_t type) { return hwloc_get_nbobjs_by_type(topo, type); };
  printf("#   packages %d, NUMA nodes %d, cores %d, hardware threads %d\n", count(HWLOC_OBJ_PACKAGE),
         count(HWLOC_OBJ_NUMANODE), count(HWLOC_OBJ_CORE), count(HWLOC_OBJ_PU));

  DeviceList gpus, nics;
  for (hwloc_obj_t o = hwloc_get_next_osdev(topo, nullptr); o; o = hwloc_get_next_osdev(topo, o)) {
    switch (o->attr->osdev.type) {
      case HWLOC_OBJ_OSDEV_GPU:
      case HWLOC_OBJ_OSDEV_COPROC: gpus.add(o); break;
      case HWLOC_OBJ_OSDEV_NETWORK:
      case HWLOC_OBJ_OSDEV_OPENFABRICS: nics.add(o); break;
      default: break;
    }
  }
  printf("#   GPUs %zu%s%s\n", gpus.devices.size(), gpus.names.empty() ? "" : ": ", gpus.names.c_str());
  printf("#   NICs %zu%s%s\n", nics.devices.size(), nics.names.empty() ? "" : ": ", nics.names.c_str());
  hwloc_topology_destroy(topo);
}

// What Chorus does with each predefined type, asked of the library itself:
// each collective is tried on MPI_COMM_SELF with one element, and an
// accepted call is one Chorus runs (a refused one returns its error).
void printDatatypes() {
  printf("#\n# Datatypes (predefined MPI-3.1 types in this MPI; every call tried on MPI_COMM_SELF)\n");
  printf("#   %-28s %5s %6s  %-12s %s\n", "type", "size", "extent", "moved by", "reduced with");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  const struct { MPI_Op op; const char *name; } ops[] = {
      {MPI_SUM, "SUM"},   {MPI_PROD, "PROD"}, {MPI_MIN, "MIN"},       {MPI_MAX, "MAX"},
      {MPI_LAND, "LAND"}, {MPI_LOR, "LOR"},   {MPI_LXOR, "LXOR"},     {MPI_BAND, "BAND"},
      {MPI_BOR, "BOR"},   {MPI_BXOR, "BXOR"}, {MPI_MINLOC, "MINLOC"}, {MPI_MAXLOC, "MAXLOC"},
      {MPIX_GPU_AVG, "AVG"}};
  struct Named {
    const char *name;
    MPI_Datatype type;
  };
  const Named types[] = {
#define CHORUS_NAMED_TYPE(t) {#t, t},
      CHORUS_MPI_PREDEFINED_TYPES(CHORUS_NAMED_TYPE)
#undef CHORUS_NAMED_TYPE
      {"MPIX_GPU_FLOAT16", MPIX_GPU_FLOAT16}, {"MPIX_GPU_BFLOAT16", MPIX_GPU_BFLOAT16},
      {"MPIX_GPU_FP8_E4M3", MPIX_GPU_FP8_E4M3}, {"MPIX_GPU_FP8_E5M2", MPIX_GPU_FP8_E5M2}};
  alignas(64) unsigned char send[256], recv[256];
  memset(send, 0, sizeof send);
  for (const Named &t : types) {
    if (t.type == MPI_DATATYPE_NULL) {
      printf("    %-28s (MPI_DATATYPE_NULL in this MPI: refused)\n", t.name);
      continue;
    }
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_size(t.type, &size);
    MPI_Type_get_extent(t.type, &lb, &extent);
    const bool moved = MPIX_Bcast_gpu(recv, 1, t.type, 0, MPI_COMM_SELF) == MPI_SUCCESS &&
                       MPIX_Allgather_gpu(send, 1, t.type, recv, 1, t.type, MPI_COMM_SELF) == MPI_SUCCESS &&
                       MPIX_Alltoall_gpu(send, 1, t.type, recv, 1, t.type, MPI_COMM_SELF) == MPI_SUCCESS;
    std::string reduced;
    for (const auto &o : ops)
      if (MPIX_Allreduce_gpu(send, recv, 1, t.type, o.op, MPI_COMM_SELF) == MPI_SUCCESS)
        reduced += std::string(reduced.empty() ? "" : " ") + o.name;
    const char *how = !moved ? "refused" : size == extent ? "all bytes" : "data only";
    printf("    %-28s %5d %6ld  %-12s %s\n", t.name, size, (long)extent, how,
           reduced.empty() ? "-" : reduced.c_str());
  }
  printf("#   \"data only\": the gaps between an element's fields are left as they were, as MPI does.\n");
}

}  // namespace

int main(int argc, char **argv) {
  bool onlySettings = false, onlyTypes = false, topo = false, version = false;
  const char *topoOnly = nullptr;  // the first option that means something only with --topo
  chorus_info::TopoRequest topoRequest;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
      version = true;
    } else if (!strcmp(argv[i], "-s")) {
      onlySettings = true;
    } else if (!strcmp(argv[i], "-d")) {
      onlyTypes = true;
    } else if (!strcmp(argv[i], "-t") || !strcmp(argv[i], "--topo")) {
      topo = true;
    } else if (!strcmp(argv[i], "--json")) {
      topoRequest.json = true;
      if (!topoOnly) topoOnly = argv[i];
    } else if (!strcmp(argv[i], "--layout") && i + 1 < argc) {
      if (!topoOnly) topoOnly = argv[i];
      if (!chorus_info::parseLayout(argv[++i], &topoRequest)) {
        fprintf(stderr, "chorus_info: --layout '%s' is not N or NxM (nodes x ranks per node)\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--channels") && i + 1 < argc) {
      if (!topoOnly) topoOnly = argv[i];
      topoRequest.channels = atoi(argv[++i]);
      if (topoRequest.channels < 1 || topoRequest.channels > 64) {
        fprintf(stderr, "chorus_info: --channels '%s' is not 1..64\n", argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr, "chorus_info: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (topoOnly && !topo) {
    fprintf(stderr, "chorus_info: %s works only with --topo (-t)\n", topoOnly);
    return 2;
  }
  if (version) {
    printf("%s\n", MPIX_Gpu_version_string());
    return 0;
  }
  // Rings and trees are pure functions of the topology: no MPI needed.
  if (topo) return chorus_info::printTopo(topoRequest);
  bool all = !onlySettings && !onlyTypes;
  bool build = all, settings = all || onlySettings, topology = all, types = all || onlyTypes;
  // A singleton MPI process when started without mpirun.
  MPI_Init(&argc, &argv);
  if (build) printBuild();
  if (settings) printSettings();
  if (topology) printTopology();
  if (types) printDatatypes();
  MPI_Finalize();
  return 0;
}
