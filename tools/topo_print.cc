#include "topo_print.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "topo/rings.h"
#include "topo/topology.h"

namespace chorus_info {

using chorus::Layout;
using chorus::NodeTopology;
using chorus::RingPlan;
using chorus::TreePlan;

bool parseLayout(const std::string &text, TopoRequest *request) {
  char *end = nullptr;
  const long nodes = strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || nodes < 1 || nodes > 4096) return false;
  long perNode = 0;
  if (*end == 'x' || *end == 'X') {
    const char *start = end + 1;
    perNode = strtol(start, &end, 10);
    if (end == start || perNode < 1 || perNode > 1024) return false;
  }
  if (*end) return false;
  request->nodes = int(nodes);
  request->ranksPerNode = int(perNode);
  return true;
}

namespace {

std::string joinInts(const std::vector<int> &values, const char *separator) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? separator : "") + std::to_string(values[i]);
  return text;
}

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string jsonInts(const std::vector<int> &values) { return "[" + joinInts(values, ", ") + "]"; }

std::string jsonNumber(double value) {
  char text[32];
  snprintf(text, sizeof text, "%.3f", value);
  return text;
}

std::string nicName(const NodeTopology &topo, int nic) { return nic < 0 ? "none" : topo.nics[size_t(nic)].name; }

// "450 GB/s to each other GPU", or the list "1:450 2:25 ..." when they differ.
std::string describeNvlink(const chorus::Gpu &gpu, int self) {
  std::string list;
  double first = -1;
  bool uniform = true, any = false;
  for (size_t j = 0; j < gpu.nvlinkGBs.size(); ++j) {
    if (int(j) == self) continue;
    const double gbs = gpu.nvlinkGBs[j];
    if (first < 0) first = gbs;
    uniform &= gbs == first;
    any |= gbs > 0;
    char item[32];
    snprintf(item, sizeof item, "%s%zu:%.0f", list.empty() ? "" : " ", j, gbs);
    list += item;
  }
  if (!any) return "none";
  if (uniform) {
    char text[64];
    snprintf(text, sizeof text, "%.0f GB/s to each other GPU", first);
    return text;
  }
  return list + " GB/s";
}

void printText(const NodeTopology &topo, const Layout &layout, const std::vector<RingPlan> &rings,
               const TreePlan &trees, const TopoRequest &request) {
  printf("# Topology of %s\n", topo.source.c_str());
  printf("#   %d cores in %zu NUMA domains:", topo.cores, topo.numa.size());
  for (size_t d = 0; d < topo.numa.size(); ++d) printf(" %zu: cores %s;", d, joinInts(topo.numa[d].cores, ",").c_str());
  printf(" NVSwitch: %s\n", topo.nvswitch ? "yes" : "no");
  printf("#\n# GPUs (%zu)\n", topo.gpus.size());
  for (size_t g = 0; g < topo.gpus.size(); ++g) {
    const chorus::Gpu &gpu = topo.gpus[g];
    printf("#   %zu  %s  NUMA %d  %-12s NVLink: %s\n", g, gpu.busId.c_str(), gpu.numa,
           gpu.names.empty() ? "-" : gpu.names.c_str(), describeNvlink(gpu, int(g)).c_str());
  }
  printf("#\n# NICs (%zu)\n", topo.nics.size());
  for (size_t n = 0; n < topo.nics.size(); ++n) {
    const chorus::Nic &nic = topo.nics[n];
    std::string name = nic.name + (nic.netdev.empty() ? "" : " (" + nic.netdev + ")");
    printf("#   %zu  %-18s %s  NUMA %d  %-10s %5.1f GB/s  nearest GPUs: %s\n", n, name.c_str(),
           nic.busId.empty() ? "-" : nic.busId.c_str(), nic.numa, chorus::linkLayerName(nic.linkLayer),
           chorus::nicGBs(nic), nic.nearestGpus.empty() ? "none" : joinInts(nic.nearestGpus, " ").c_str());
  }
  const int nnodes = layout.nodeCount();
  printf("#\n# Layout: %d node%s x %d ranks (rank r on node r/%d, %s)\n", nnodes, nnodes > 1 ? "s" : "",
         request.ranksPerNode, request.ranksPerNode,
         topo.gpus.empty() ? "host memory, dealt over the NUMA domains" : "GPU r % GPUs");
  printf("#\n# Rings (%zu channels): ranks in ring order, '|' between nodes\n", rings.size());
  for (size_t c = 0; c < rings.size(); ++c) {
    const RingPlan &ring = rings[c];
    std::string order;
    for (size_t i = 0; i < ring.order.size(); ++i) {
      const bool newNode =
          i > 0 && layout.ranks[size_t(ring.order[i])].node != layout.ranks[size_t(ring.order[i - 1])].node;
      order += (i == 0 ? "" : newNode ? " | " : " ") + std::to_string(ring.order[i]);
    }
    printf("#   ring %zu: %s\n", c, order.c_str());
    printf("#     predicted %.1f GB/s, slowest link: %s\n", ring.bandwidthGBs,
           ring.slowestLink.empty() ? "none" : ring.slowestLink.c_str());
    for (const chorus::NodeCrossing &x : ring.crossings)
      printf("#     node %d -> %d: rank %d via %s -> rank %d via %s, %.1f GB/s\n", x.fromNode, x.toNode, x.sendRank,
             nicName(topo, x.sendNic).c_str(), x.recvRank, nicName(topo, x.recvNic).c_str(), x.bandwidthGBs);
  }
  printf("#\n# Trees (double binary tree over nodes, a chain inside each node)\n");
  for (int t = 0; t < 2; ++t) {
    printf("#   tree %d: root rank %d; node heads %s\n", t, trees.rootRank[t],
           joinInts(trees.nodeHead[t], " ").c_str());
    for (size_t r = 0; r < trees.links[t].size(); ++r) {
      const chorus::TreeLinks &links = trees.links[t][r];
      printf("#     rank %zu: parent %d, children %s\n", r, links.parent,
             links.children.empty() ? "none" : joinInts(links.children, " ").c_str());
    }
  }
}

void printJson(const NodeTopology &topo, const Layout &layout, const std::vector<RingPlan> &rings,
               const TreePlan &trees, const TopoRequest &request) {
  printf("{\n  \"source\": %s,\n  \"cores\": %d,\n  \"nvswitch\": %s,\n", jsonString(topo.source).c_str(), topo.cores,
         topo.nvswitch ? "true" : "false");
  printf("  \"numa\": [");
  for (size_t d = 0; d < topo.numa.size(); ++d)
    printf("%s{\"os_index\": %d, \"cores\": %s}", d ? ", " : "", topo.numa[d].osIndex,
           jsonInts(topo.numa[d].cores).c_str());
  printf("],\n  \"gpus\": [");
  for (size_t g = 0; g < topo.gpus.size(); ++g) {
    const chorus::Gpu &gpu = topo.gpus[g];
    std::string nvlink;
    for (size_t j = 0; j < gpu.nvlinkGBs.size(); ++j) nvlink += (j ? ", " : "") + jsonNumber(gpu.nvlinkGBs[j]);
    printf("%s\n    {\"index\": %zu, \"bus_id\": %s, \"numa\": %d, \"names\": %s, \"nvlink_gbs\": [%s]}", g ? "," : "",
           g, jsonString(gpu.busId).c_str(), gpu.numa, jsonString(gpu.names).c_str(), nvlink.c_str());
  }
  printf("],\n  \"nics\": [");
  for (size_t n = 0; n < topo.nics.size(); ++n) {
    const chorus::Nic &nic = topo.nics[n];
    printf("%s\n    {\"index\": %zu, \"name\": %s, \"netdev\": %s, \"bus_id\": %s, \"numa\": %d, \"link_layer\": %s, "
           "\"gbs\": %s, \"nearest_gpus\": %s}",
           n ? "," : "", n, jsonString(nic.name).c_str(), jsonString(nic.netdev).c_str(),
           jsonString(nic.busId).c_str(), nic.numa, jsonString(chorus::linkLayerName(nic.linkLayer)).c_str(),
           jsonNumber(chorus::nicGBs(nic)).c_str(), jsonInts(nic.nearestGpus).c_str());
  }
  std::vector<int> nodeOf, gpuOf;
  for (const chorus::RankPlace &p : layout.ranks) {
    nodeOf.push_back(p.node);
    gpuOf.push_back(p.gpu);
  }
  printf("],\n  \"layout\": {\"nodes\": %d, \"ranks_per_node\": %d, \"node_of_rank\": %s, \"gpu_of_rank\": %s},\n",
         layout.nodeCount(), request.ranksPerNode, jsonInts(nodeOf).c_str(), jsonInts(gpuOf).c_str());
  printf("  \"rings\": [");
  for (size_t c = 0; c < rings.size(); ++c) {
    const RingPlan &ring = rings[c];
    printf("%s\n    {\"channel\": %zu, \"order\": %s, \"bandwidth_gbs\": %s, \"slowest_link\": %s, \"crossings\": [",
           c ? "," : "", c, jsonInts(ring.order).c_str(), jsonNumber(ring.bandwidthGBs).c_str(),
           jsonString(ring.slowestLink).c_str());
    for (size_t i = 0; i < ring.crossings.size(); ++i) {
      const chorus::NodeCrossing &x = ring.crossings[i];
      printf("%s{\"from_node\": %d, \"to_node\": %d, \"send_rank\": %d, \"recv_rank\": %d, \"send_nic\": %s, "
             "\"recv_nic\": %s, \"bandwidth_gbs\": %s}",
             i ? ", " : "", x.fromNode, x.toNode, x.sendRank, x.recvRank, jsonString(nicName(topo, x.sendNic)).c_str(),
             jsonString(nicName(topo, x.recvNic)).c_str(), jsonNumber(x.bandwidthGBs).c_str());
    }
    printf("]}");
  }
  printf("],\n  \"trees\": [");
  for (int t = 0; t < 2; ++t) {
    std::vector<int> parents;
    std::string children;
    for (size_t r = 0; r < trees.links[t].size(); ++r) {
      parents.push_back(trees.links[t][r].parent);
      children += (r ? ", " : "") + jsonInts(trees.links[t][r].children);
    }
    printf("%s\n    {\"tree\": %d, \"root_rank\": %d, \"node_heads\": %s, \"parent\": %s, \"children\": [%s]}",
           t ? "," : "", t, trees.rootRank[t], jsonInts(trees.nodeHead[t]).c_str(), jsonInts(parents).c_str(),
           children.c_str());
  }
  printf("]\n}\n");
}

}  // namespace

int printTopo(const TopoRequest &given) {
  NodeTopology topo;
  if (chorus::topoLoadLocal(&topo) != chorus::Status::Ok) {
    fprintf(stderr, "chorus_info: cannot read the topology (see the warning above)\n");
    return 1;
  }
  TopoRequest request = given;
  if (request.ranksPerNode == 0)
    request.ranksPerNode = int(!topo.gpus.empty() ? topo.gpus.size() : std::max<size_t>(topo.numa.size(), 1));
  if (request.channels == 0) request.channels = int(std::max<size_t>(topo.nics.size(), 2));
  const Layout layout = chorus::makeUniformLayout(topo, request.nodes, request.ranksPerNode);
  std::vector<RingPlan> rings;
  TreePlan trees;
  if (chorus::buildRings({&topo}, layout, request.channels, &rings) != chorus::Status::Ok ||
      chorus::buildTrees({&topo}, layout, &trees) != chorus::Status::Ok) {
    fprintf(stderr, "chorus_info: cannot build rings and trees for this layout\n");
    return 1;
  }
  if (request.json) printJson(topo, layout, rings, trees, request);
  else printText(topo, layout, rings, trees, request);
  return 0;
}

}  // namespace chorus_info
