#include "sim/sim_topo.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "topo/rings.h"
#include "topo/topology.h"

namespace chorus {
namespace sim {

namespace {

// Keeps the slowest of the positive figures seen (0: none yet).
void keepSlowest(double *slowest, double gbs) {
  if (gbs > 0) *slowest = *slowest > 0 ? std::min(*slowest, gbs) : gbs;
}

// A JSON value: just what chorus_info --topo --json writes (objects,
// arrays, strings, numbers, booleans, null).
struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  double number = 0;
  bool flag = false;
  std::string text;
  std::vector<Json> items;
  std::map<std::string, Json> fields;
  const Json *field(const char *name) const {
    auto it = fields.find(name);
    return it == fields.end() ? nullptr : &it->second;
  }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string &text) : s_(text) {}
  bool parse(Json *out) {
    if (!value(out, 0)) return false;
    skip();
    return pos_ == s_.size();
  }
  size_t where() const { return pos_; }

 private:
  static constexpr int kMaxDepth = 64;
  void skip() {
    while (pos_ < s_.size() && isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool literal(const char *word) {
    const size_t n = strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }
  bool string(std::string *out) {
    if (pos_ >= s_.size() || s_[pos_] != '"') return false;
    for (++pos_; pos_ < s_.size(); ++pos_) {
      const char c = s_[pos_];
      if (c == '"') return ++pos_, true;
      if (c == '\\') {
        if (++pos_ >= s_.size()) return false;
        const char e = s_[pos_];
        if (e == 'u') {  // kept as '?': names only, never numbers
          if (pos_ + 4 >= s_.size()) return false;
          pos_ += 4;
          out->push_back('?');
        } else {
          out->push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
        }
      } else {
        out->push_back(c);
      }
    }
    return false;
  }
  bool value(Json *v, int depth) {
    if (depth > kMaxDepth) return false;
    skip();
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '{') {
      v->kind = Json::Object;
      ++pos_;
      skip();
      if (pos_ < s_.size() && s_[pos_] == '}') return ++pos_, true;
      for (;;) {
        skip();
        std::string key;
        if (!string(&key)) return false;
        skip();
        if (pos_ >= s_.size() || s_[pos_++] != ':') return false;
        if (!value(&v->fields[key], depth + 1)) return false;
        skip();
        if (pos_ >= s_.size()) return false;
        if (s_[pos_] == ',') { ++pos_; continue; }
        if (s_[pos_] == '}') return ++pos_, true;
        return false;
      }
    }
    if (c == '[') {
      v->kind = Json::Array;
      ++pos_;
      skip();
      if (pos_ < s_.size() && s_[pos_] == ']') return ++pos_, true;
      for (;;) {
        v->items.emplace_back();
        if (!value(&v->items.back(), depth + 1)) return false;
        skip();
        if (pos_ >= s_.size()) return false;
        if (s_[pos_] == ',') { ++pos_; continue; }
        if (s_[pos_] == ']') return ++pos_, true;
        return false;
      }
    }
    if (c == '"') return v->kind = Json::String, string(&v->text);
    if (literal("true")) return v->kind = Json::Bool, v->flag = true, true;
    if (literal("false")) return v->kind = Json::Bool, true;
    if (literal("null")) return true;
    const char *begin = s_.c_str() + pos_;
    char *end = nullptr;
    v->number = strtod(begin, &end);
    if (end == begin) return false;
    v->kind = Json::Number;
    pos_ += size_t(end - begin);
    return true;
  }
  const std::string &s_;
  size_t pos_ = 0;
};

bool shapeFromJson(const std::string &path, NodeShape *shape, std::string *why) {
  std::ifstream in(path);
  if (!in) return *why = "cannot read " + path, false;
  std::stringstream text;
  text << in.rdbuf();
  const std::string body = text.str();
  Json doc;
  JsonReader reader(body);
  if (!reader.parse(&doc) || doc.kind != Json::Object)
    return *why = path + ": not JSON (at byte " + std::to_string(reader.where()) + ")", false;
  const Json *gpus = doc.field("gpus"), *nics = doc.field("nics"), *cores = doc.field("cores");
  if (!gpus || gpus->kind != Json::Array || !nics || nics->kind != Json::Array || !cores ||
      cores->kind != Json::Number)
    return *why = path + ": not chorus_info --topo --json output (no gpus, nics or cores)", false;
  shape->gpus = int(gpus->items.size());
  shape->cores = int(cores->number);
  shape->nics = int(nics->items.size());
  for (const Json &nic : nics->items) {
    const Json *gbs = nic.field("gbs");
    if (gbs && gbs->kind == Json::Number) keepSlowest(&shape->nicGBs, gbs->number);
  }
  // The rings of one node: each one's bandwidth is its slowest link.
  const Json *layout = doc.field("layout"), *rings = doc.field("rings");
  const Json *nodes = layout ? layout->field("nodes") : nullptr;
  if (rings && rings->kind == Json::Array && nodes && nodes->kind == Json::Number && nodes->number == 1)
    for (const Json &ring : rings->items) {
      const Json *gbs = ring.field("bandwidth_gbs");
      if (gbs && gbs->kind == Json::Number) keepSlowest(&shape->intraGBs, gbs->number);
    }
  return true;
}

bool shapeFromXml(const std::string &path, NodeShape *shape, std::string *why) {
  NodeTopology topo;
  if (topoLoadXml(path.c_str(), &topo) != Status::Ok) return *why = path + ": not an hwloc XML topology", false;
  shape->gpus = int(topo.gpus.size());
  shape->cores = topo.cores;
  shape->nics = int(topo.nics.size());
  for (const Nic &nic : topo.nics) keepSlowest(&shape->nicGBs, nicGBs(nic));
  // Ring neighbours in the GPUs' hardware order, as the rings of one node run.
  for (int g = 0; shape->gpus > 1 && g < shape->gpus; ++g) {
    RankPlace a, b;
    a.gpu = g;
    b.gpu = (g + 1) % shape->gpus;
    std::string kind;
    keepSlowest(&shape->intraGBs, intraNodeLinkGBs(topo, a, b, &kind));
  }
  return true;
}

bool endsWith(const std::string &s, const char *tail) {
  const size_t n = strlen(tail);
  return s.size() >= n && std::equal(s.end() - long(n), s.end(), tail,
                                     [](char a, char b) { return tolower(static_cast<unsigned char>(a)) == b; });
}

}  // namespace

bool readNodeShape(const std::string &path, NodeShape *shape, std::string *why) {
  *shape = NodeShape{};
  if (!(endsWith(path, ".xml") ? shapeFromXml(path, shape, why) : shapeFromJson(path, shape, why))) return false;
  if (shape->gpus == 0 && shape->cores <= 0) return *why = path + ": neither GPUs nor cores", false;
  return true;
}

Machine machineWithNode(const Machine &base, const NodeShape &shape, const std::string &name) {
  Machine m = base;
  m.name = name;
  m.gpu = shape.gpus > 0;
  m.sharedMemory = !m.gpu;
  m.ranksPerNode = m.gpu ? shape.gpus : shape.cores;
  if (m.gpu && shape.intraGBs > 0) m.intra.gbPerS = shape.intraGBs;
  m.fabric.nicsPerNode = std::max(1, shape.nics);
  if (shape.nicGBs > 0) m.fabric.net.gbPerS = shape.nicGBs;
  char text[256];
  snprintf(text, sizeof text, "%d %s, %s%.0f GB/s between ring neighbours, %d NIC(s) of %.0f Gb/s; the rest from %s",
           m.ranksPerNode, m.gpu ? "GPUs" : "cores", m.gpu ? "" : "(the preset's) ", m.intra.gbPerS,
           m.fabric.nicsPerNode, m.fabric.net.gbPerS * 8, base.name.c_str());
  m.description = text;
  return m;
}

}  // namespace sim
}  // namespace chorus
