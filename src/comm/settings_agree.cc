// The settings every rank of a communicator must share (ParamScope::Agreed
// in core/params.h), compared at set-up: one hash in the bootstrap's first
// exchange, and only when the hashes differ a second exchange of the
// values, to say which setting differs, how, and on which ranks.
#include "comm/settings_agree.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/log.h"
#include "core/params.h"

namespace chorus {

namespace {

// Room for one value in the second exchange: the agreed settings are
// choices and numbers ("recursive_doubling", "67108864").
constexpr size_t kValueBytes = 24;

thread_local std::string t_disagreement;

uint64_t fnv1a(const std::string &text, uint64_t h) {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull;  // a separator, so that "ab","c" and "a","bc" differ
}

std::vector<ParamId> agreedParams() {
  std::vector<ParamId> ids;
  for (int i = 0; i < int(ParamId::Count); ++i)
    if (paramSpec(ParamId(i)).scope == ParamScope::Agreed) ids.push_back(ParamId(i));
  return ids;
}

// "0-3,5,7", cut short after a few dozen characters.
std::string rankList(const std::vector<int> &ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (out.size() > 40) return out + ",...";
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += (j == i + 1 ? "," : "-") + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

// `name` differs: "NAME differs between ranks: "v1" on rank(s) ..., "v2" on ...".
std::string describeOne(const char *name, const std::vector<std::string> &values) {
  std::vector<std::string> distinct;
  std::vector<std::vector<int>> holders;
  for (int r = 0; r < int(values.size()); ++r) {
    size_t k = 0;
    while (k < distinct.size() && distinct[k] != values[size_t(r)]) ++k;
    if (k == distinct.size()) {
      distinct.push_back(values[size_t(r)]);
      holders.emplace_back();
    }
    holders[k].push_back(r);
  }
  std::string out = std::string(name) + " differs between ranks:";
  for (size_t k = 0; k < distinct.size() && k < 3; ++k)
    out += std::string(k ? "," : "") + " \"" + distinct[k] + "\" on rank" + (holders[k].size() > 1 ? "s " : " ") +
           rankList(holders[k]);
  if (distinct.size() > 3) out += ", ...";
  return out;
}

}  // namespace

uint64_t agreedSettingsHash() {
  uint64_t h = 1469598103934665603ull;
  for (ParamId id : agreedParams()) h = fnv1a(paramCanonical(id), fnv1a(paramSpec(id).env, h));
  return h;
}

Status describeSettingsDisagreement(MPI_Comm comm, int nranks) {
  const std::vector<ParamId> ids = agreedParams();
  std::vector<char> mine(ids.size() * kValueBytes, 0), all(mine.size() * size_t(nranks));
  for (size_t i = 0; i < ids.size(); ++i)
    snprintf(&mine[i * kValueBytes], kValueBytes, "%s", paramCanonical(ids[i]).c_str());
  CHORUS_MPICHECK(MPI_Allgather(mine.data(), int(mine.size()), MPI_CHAR, all.data(), int(mine.size()), MPI_CHAR, comm));
  std::string first, others;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::vector<std::string> values(static_cast<size_t>(nranks));
    bool differ = false;
    for (int r = 0; r < nranks; ++r) {
      const char *v = &all[(size_t(r) * ids.size() + i) * kValueBytes];
      values[size_t(r)].assign(v, strnlen(v, kValueBytes));
      differ = differ || values[size_t(r)] != values[0];
    }
    if (!differ) continue;
    if (first.empty())
      first = describeOne(paramSpec(ids[i]).env, values);
    else
      others += std::string(others.empty() ? "" : ", ") + paramSpec(ids[i]).env;
  }
  // Equal values under unequal hashes: a build whose table differs between
  // ranks (two Chorus versions in one job).
  if (first.empty()) first = "the settings that every rank must share differ between ranks (different Chorus builds?)";
  t_disagreement = first + (others.empty() ? "" : "; so do " + others) +
                   "; every rank must set it alike (chorus(7), Agreed settings)";
  CHORUS_WARN("%s", t_disagreement.c_str());
  return Status::InvalidArgument;
}

void clearSettingsDisagreement() { t_disagreement.clear(); }

const char *contextSettingsDisagreement() { return t_disagreement.c_str(); }

}  // namespace chorus
