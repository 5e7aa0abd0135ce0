#!/bin/sh
# doc-links.sh - every relative link in README.md and doc/*.md must lead
# somewhere: the file (or folder) must exist, and a #anchor must be the
# GitHub-style slug of a heading in the target markdown file.  A broken one
# is reported as FILE:LINE: broken link 'TARGET': why, and fails the test.
#
# The user guide is split over many pages that others keep editing; a
# renamed heading or page would otherwise leave dead links in silence.
#
# The checker first proves on a planted page that it catches a missing
# file, a missing anchor in another page and in the same page, and that it
# ignores links inside code, so that a checker that checks nothing fails.
#
# Usage: doc-links.sh [FILE.md...]   (default: README.md doc/*.md of the
# source tree this script lives in).  Plain POSIX sh and awk: no generator,
# no network; links with a scheme (https:, mailto:) are not followed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

# The checker proper, one awk pass over the pages.  Anchors follow GitHub:
# heading text without markdown (code ticks, link targets), lower case,
# ASCII punctuation other than '-' and '_' dropped, each space a '-', and
# a repeated slug numbered -1, -2, ...  Explicit <a name=...>/<a id=...>
# anchors count too.  The program is single-quoted shell text: each '\''
# in it is an awk quote, not an escape gone wrong.
# shellcheck disable=SC1003,SC2016
checker='
function shq(s) { gsub(/'\''/, "'\''\\'\'''\''", s); return s }
function exists(p) {
  if (!(p in ex)) ex[p] = (system("test -e '\''" shq(p) "'\''") == 0)
  return ex[p]
}
function dirof(f) { return (f ~ /\//) ? substr(f, 1, match(f, /\/[^\/]*$/) - 1) : "." }
function fence(line) { return line ~ /^ ? ? ?(```|~~~)/ }
function slugify(h,   s, m, txt, out, i, c, punct) {
  s = h
  while (match(s, /\[[^]]*\]\([^)]*\)/)) {
    m = substr(s, RSTART, RLENGTH)
    txt = substr(m, 2, index(m, "](") - 2)
    s = substr(s, 1, RSTART - 1) txt substr(s, RSTART + RLENGTH)
  }
  s = tolower(s)
  punct = "!\"#$%&'\''()*+,./:;<=>?@[\\]^`{|}~"
  out = ""
  for (i = 1; i <= length(s); i++) {
    c = substr(s, i, 1)
    if (c == " ") out = out "-"
    else if (index(punct, c) == 0) out = out c
  }
  return out
}
function load(f,   line, infence, h, s, n, a) {
  if (f in loaded) return
  loaded[f] = 1
  infence = 0
  while ((getline line < f) > 0) {
    if (fence(line)) { infence = !infence; continue }
    if (infence) continue
    if (line ~ /^ ? ? ?#+[ \t]/ || line ~ /^ ? ? ?#+$/) {
      h = line
      sub(/^ *#+[ \t]*/, "", h)
      sub(/[ \t]+#+[ \t]*$/, "", h)
      sub(/[ \t]+$/, "", h)
      s = slugify(h)
      n = seen[f, s]++
      if (n > 0) s = s "-" n
      anchor[f, s] = 1
    }
    while (match(line, /<a (name|id)="[^"]*"/)) {
      a = substr(line, RSTART, RLENGTH)
      sub(/^<a (name|id)="/, "", a); sub(/"$/, "", a)
      anchor[f, a] = 1
      line = substr(line, RSTART + RLENGTH)
    }
  }
  close(f)
}
function bad(t, why) {
  printf "%s:%d: broken link '\''%s'\'': %s\n", FILENAME, FNR, t, why
  nbad++
}
function check(t,   path, frag, k, target) {
  sub(/^[ \t]+/, "", t)
  if (t ~ /^</) { sub(/^</, "", t); sub(/>.*$/, "", t) }
  else sub(/[ \t].*$/, "", t)
  nlinks++
  if (t ~ /^[A-Za-z][A-Za-z0-9+.-]*:/) { nlinks--; return }
  if (t == "" || t == "#") { bad(t, "empty target"); return }
  k = index(t, "#")
  if (k) { path = substr(t, 1, k - 1); frag = substr(t, k + 1) }
  else { path = t; frag = "" }
  if (path ~ /^\//) { bad(t, "absolute path (works on no copy but one)"); return }
  target = (path == "") ? FILENAME : dirof(FILENAME) "/" path
  if (path != "" && !exists(target)) { bad(t, "no such file: " target); return }
  if (k == 0) return
  if (target !~ /\.(md|markdown)$/) { bad(t, "#anchor into a file that is not markdown"); return }
  load(target)
  if (!((target, frag) in anchor)) bad(t, "no heading with anchor #" frag " in " target)
}
FNR == 1 { infence = 0; nfiles++ }
{
  if (fence($0)) { infence = !infence; next }
  if (infence) next
  line = $0
  gsub(/`[^`]*`/, "", line)
  if (match(line, /^ ? ? ?\[[^]]+\]:[ \t]+[^ \t]/)) {
    t = line; sub(/^ *\[[^]]+\]:[ \t]+/, "", t); check(t); next
  }
  while (match(line, /\]\([^)]*\)/)) {
    t = substr(line, RSTART + 2, RLENGTH - 3)
    line = substr(line, RSTART + RLENGTH)
    check(t)
  }
}
END {
  printf "checked %d relative links in %d files, %d broken\n", nlinks, nfiles, nbad
  exit nbad > 0
}'

check() { awk "$checker" "$@"; }

# --- Self-test on a planted page. ---
scratch=$(mktemp -d "${TMPDIR:-/tmp}/chorus-doc-links.XXXXXX") || exit 99
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/sub"
cat >"$scratch/a.md" <<'EOF'
# Page A

## Same `code`: heading, twice

## Same `code`: heading, twice

Good: [b](sub/b.md), [b heading](sub/b.md#real-heading_2),
[self](#page-a), [second](#same-code-heading-twice-1), [dir](sub),
[web](https://example.com/nowhere.md), `[in code](missing-in-code.md)`.
Bad: [gone](missing.md), [no anchor](sub/b.md#nope).
Bad too: [self](#nowhere).

```sh
echo "[in a fence](missing-in-fence.md)"
```
EOF
cat >"$scratch/sub/b.md" <<'EOF'
# B

### Real heading_2 ###
EOF
got=$(cd "$scratch" && check a.md sub/b.md)
want="a.md:10: broken link 'missing.md': no such file: ./missing.md
a.md:10: broken link 'sub/b.md#nope': no heading with anchor #nope in ./sub/b.md
a.md:11: broken link '#nowhere': no heading with anchor #nowhere in a.md
checked 8 relative links in 2 files, 3 broken"
if [ "$got" != "$want" ]; then
  echo "FAIL: the checker does not catch the planted broken links as it should"
  echo "--- expected:"; echo "$want"; echo "--- got:"; echo "$got"
  exit 1
fi

# --- The real pages. ---
cd "$top" || exit 99
if [ $# -eq 0 ]; then
  set -- README.md doc/*.md
fi
for f in "$@"; do
  [ -f "$f" ] || { echo "FAIL: $f: no such page"; exit 1; }
done
check "$@"
