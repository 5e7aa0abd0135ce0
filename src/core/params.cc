#include "core/params.h"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace chorus {

namespace {

constexpr ParamSpec kSpecs[] = {
#define CHORUS_PARAM_SPEC(id, kind, scope, env, def, accepted, help) \
  {ParamId::id, ParamKind::kind, ParamScope::scope, env, def, accepted, help},
    CHORUS_PARAM_TABLE(CHORUS_PARAM_SPEC)
#undef CHORUS_PARAM_SPEC
};
constexpr int kNumParams = static_cast<int>(ParamId::Count);
static_assert(sizeof(kSpecs) / sizeof(kSpecs[0]) == kNumParams, "one spec per ParamId");

struct ParamValue {
  const char *raw = nullptr;   // environment text, if set
  std::string text;            // effective value (default when bad)
  int64_t number = -1;         // Integer/Size; -1 = auto
};

std::once_flag g_once;
// Set once the values are parsed.  The planner reads parameters on every
// call, and std::call_once costs a thread-local access and pthread_once
// each time: test this flag first.
std::atomic<bool> g_ready{false};
ParamValue g_values[kNumParams];

bool inList(const char *accepted, const char *item) {
  std::string list(accepted);
  size_t start = 0;
  for (;;) {
    size_t comma = list.find(',', start);
    std::string entry = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (strcasecmp(entry.c_str(), item) == 0) return true;
    if (comma == std::string::npos) return false;
    start = comma + 1;
  }
}

// "lo..hi" possibly prefixed with "auto or ".
bool inRange(const char *accepted, int64_t v) {
  const char *range = strstr(accepted, "..");
  if (!range) return true;
  const char *lo = range;
  while (lo > accepted && lo[-1] != ' ') --lo;
  int64_t min = 0, max = 0;
  std::string loText(lo, range - lo);
  if (!parseSize(loText.c_str(), &min) || !parseSize(range + 2, &max)) return true;
  return v >= min && v <= max;
}

bool parseNumber(const ParamSpec &spec, const char *text, int64_t *out) {
  if (strcasecmp(text, "auto") == 0 && strstr(spec.accepted, "auto")) {
    *out = -1;
    return true;
  }
  if (spec.kind == ParamKind::Size) return parseSize(text, out) && inRange(spec.accepted, *out);
  char *end = nullptr;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno || end == text || *end) return false;
  *out = v;
  return inRange(spec.accepted, v);
}

bool validList(const ParamSpec &spec, const char *text) {
  std::string list(text[0] == '^' ? text + 1 : text);
  size_t start = 0;
  for (;;) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!inList(spec.accepted, item.c_str())) return false;
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

void parseOne(const ParamSpec &spec, ParamValue &value) {
  value.raw = getenv(spec.env);
  const char *text = value.raw && *value.raw ? value.raw : nullptr;
  bool ok = true;
  if (text) {
    switch (spec.kind) {
      case ParamKind::Choice: ok = !*spec.accepted || inList(spec.accepted, text); break;
      case ParamKind::List: ok = validList(spec, text); break;
      case ParamKind::Integer:
      case ParamKind::Size: ok = parseNumber(spec, text, &value.number); break;
    }
    if (!ok)
      // The logger depends on these settings, so this one warning goes straight to stderr.
      fprintf(stderr, "CHORUS WARN %s=\"%s\" is not valid (accepted: %s); using the default \"%s\"\n", spec.env,
              text, spec.accepted, spec.defaultValue);
  }
  value.text = (text && ok) ? text : spec.defaultValue;
  if ((spec.kind == ParamKind::Integer || spec.kind == ParamKind::Size) && !(text && ok))
    parseNumber(spec, spec.defaultValue, &value.number);
}

// CHORUS_* names outside the table that the tree's own scripts, tests and
// tools read (scripts/, tests/, perf/, the CUDA emulation): not misspellings.
constexpr const char *kOtherPrefixes[] = {"CHORUS_TEST_", "CHORUS_PERF_", "CHORUS_EMU_"};
constexpr const char *kOtherNames[] = {"CHORUS_GPU_MUST_RUN", "CHORUS_CONFIGURE_FLAGS", "CHORUS_JOBS",
                                       "CHORUS_MPICH_TESTS", "CHORUS_STALL_TIMEOUT"};

size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// A setting with a typo is otherwise silently ignored, and the job runs
// with the default (as UCX warns about unused UCX_* variables).
void warnUnknownSettings() {
  for (char **e = environ; e && *e; ++e) {
    if (strncmp(*e, "CHORUS_", 7) != 0) continue;
    const char *eq = strchr(*e, '=');
    const std::string name(*e, eq ? size_t(eq - *e) : strlen(*e));
    bool known = false;
    for (const ParamSpec &spec : kSpecs) known = known || name == spec.env;
    for (const char *other : kOtherNames) known = known || name == other;
    for (const char *prefix : kOtherPrefixes) known = known || name.compare(0, strlen(prefix), prefix) == 0;
    if (known) continue;
    const char *nearest = nullptr;
    size_t best = 4;  // beyond 3 edits a suggestion is a guess
    for (const ParamSpec &spec : kSpecs) {
      const size_t d = editDistance(name, spec.env);
      if (d < best) best = d, nearest = spec.env;
    }
    // Straight to stderr, as the warnings about bad values: the logger depends on these settings.
    fprintf(stderr, "CHORUS WARN %s is set but is not a Chorus setting%s%s%s (chorus_info lists them)\n", name.c_str(),
            nearest ? "; did you mean " : "", nearest ? nearest : "", nearest ? "?" : "");
  }
}

}  // namespace

bool parseSize(const char *text, int64_t *out) {
  if (!text || !*text) return false;
  char *end = nullptr;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno || end == text || v < 0) return false;
  int64_t scale = 1;
  switch (*end) {
    case 0: break;
    case 'k': case 'K': scale = int64_t(1) << 10; ++end; break;
    case 'm': case 'M': scale = int64_t(1) << 20; ++end; break;
    case 'g': case 'G': scale = int64_t(1) << 30; ++end; break;
    default: return false;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end) return false;
  if (v > INT64_MAX / scale) return false;
  *out = v * scale;
  return true;
}

void paramsInit() {
  if (g_ready.load(std::memory_order_acquire)) return;
  std::call_once(g_once, [] {
    for (int i = 0; i < kNumParams; ++i) parseOne(kSpecs[i], g_values[i]);
    warnUnknownSettings();
    g_ready.store(true, std::memory_order_release);
  });
}

const ParamSpec &paramSpec(ParamId id) { return kSpecs[static_cast<int>(id)]; }

int64_t paramInt(ParamId id) {
  paramsInit();
  return g_values[static_cast<int>(id)].number;
}

const char *paramString(ParamId id) {
  paramsInit();
  return g_values[static_cast<int>(id)].text.c_str();
}

const char *paramRaw(ParamId id) {
  paramsInit();
  return g_values[static_cast<int>(id)].raw;
}

std::string paramCanonical(ParamId id) {
  paramsInit();
  const ParamSpec &spec = kSpecs[static_cast<int>(id)];
  const ParamValue &value = g_values[static_cast<int>(id)];
  if (spec.kind == ParamKind::Integer || spec.kind == ParamKind::Size)
    return value.number < 0 ? std::string("auto") : std::to_string(value.number);
  std::string text = value.text;
  for (char &c : text) c = char(tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace chorus
