#!/bin/sh
# check_links.sh — the repository must be readable on its own:
#   1. every relative link of every Markdown file resolves to a file
#      or folder of the repository (not outside it, not an absolute path);
#   2. no source or document of the repository names a path outside it:
#      nothing under a sibling "share""d" folder, no absolute path of a
#      development machine (a home or work directory);
#   3. every Markdown file named in a source or document (a word
#      ending in .md) exists somewhere in the repository, so a comment cannot
#      send the reader to a page that only exists on someone's machine.
# Usage: check_links.sh [SOURCE_DIR] (default: the repository holding this
# script).  Exit 0 when everything resolves, 1 with one line per problem.
set -eu

ROOT=$(cd "${1:-$(dirname "$0")/../..}" && pwd -P)
cd "$ROOT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

# the files of the repository: tracked and new ones that git does not ignore
# (when git works here), else every file outside build outputs and
# dependencies; a tracked file deleted in the working tree does not count
if git -c safe.directory='*' -C "$ROOT" ls-files -co --exclude-standard >"$TMP/all" 2>/dev/null &&
    [ -s "$TMP/all" ]; then
    while IFS= read -r f; do
        [ -e "$f" ] && printf '%s\n' "$f"
    done <"$TMP/all" | sort -u >"$TMP/files"
else
    find . -type f ! -path './.git/*' ! -path './build*' ! -path './interop/node_modules/*' |
        sed 's#^\./##' | sort >"$TMP/files"
fi
grep -v -e '^interop/node_modules/' -e '^build[^/]*/' "$TMP/files" >"$TMP/f" || true
mv "$TMP/f" "$TMP/files"
# folders that hold tracked files (a link may name a folder)
awk -F/ '{ p = ""; for (i = 1; i < NF; i++) { p = p (i > 1 ? "/" : "") $i; print p } }' "$TMP/files" |
    sort -u >"$TMP/dirs"
# the text files checks 2 and 3 read; tests/docs/ is left out: its scripts
# spell out the very problems they look for
grep -E '\.(md|c|h|cu|cuh|sh|txt|py|js|cmake|service|target|conf|circom)$' "$TMP/files" |
    grep -v '^tests/docs/' >"$TMP/text" || true
grep -E '\.md$' "$TMP/files" >"$TMP/md" || true

# --- 1. relative links in Markdown --------------------------------------
# "FILE LINE TARGET" for inline links [x](t), images ![x](t) and reference
# definitions [x]: t, outside fenced code blocks and inline code spans
tr '\n' '\0' <"$TMP/md" | xargs -0 -r awk '
    FNR == 1 { fence = 0 }
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    fence { next }
    {
        line = $0
        gsub(/`[^`]*`/, "", line)
        if (match(line, /^[ \t]*\[[^]]+\]:[ \t]+[^ \t]+/)) {
            t = substr(line, RSTART, RLENGTH)
            sub(/^[^]]*\]:[ \t]+/, "", t)
            print FILENAME, FNR, t
            next
        }
        while (match(line, /\]\([^)]*\)/)) {
            t = substr(line, RSTART + 2, RLENGTH - 3)
            line = substr(line, RSTART + RLENGTH)
            sub(/^[ \t]+/, "", t)
            sub(/[ \t].*$/, "", t)
            sub(/^</, "", t)
            sub(/>$/, "", t)
            if (t != "")
                print FILENAME, FNR, t
        }
    }' >"$TMP/links"

# resolves each target against the file lists, without touching the disk
awk -v files="$TMP/files" -v dirs="$TMP/dirs" '
    BEGIN {
        while ((getline f < files) > 0) known[f] = 1
        while ((getline f < dirs) > 0) known[f] = 1
    }
    {
        md = $1; ln = $2; t = $3
        if (t ~ /^#/ || t ~ /^[A-Za-z][A-Za-z0-9+.-]*:/) next      # anchor, URL, mailto:
        if (t ~ /^\//) { print md ":" ln ": link to an absolute path: " t; next }
        p = t
        sub(/#.*/, "", p)
        sub(/\?.*/, "", p)
        if (p == "") next
        dir = md
        if (!sub(/\/[^\/]*$/, "", dir)) dir = ""
        n = split((dir == "" ? "" : dir "/") p, part, "/")
        k = 0
        out = 0
        for (i = 1; i <= n; i++) {
            if (part[i] == "" || part[i] == ".") continue
            if (part[i] == "..") { if (k == 0) { out = 1; break } k--; continue }
            seg[++k] = part[i]
        }
        if (out) { print md ":" ln ": link leaves the repository: " t; next }
        rel = ""
        for (i = 1; i <= k; i++) rel = rel (i > 1 ? "/" : "") seg[i]
        if (rel != "" && !(rel in known))
            print md ":" ln ": broken link: " t " (no file or folder " rel " in the repository)"
    }' "$TMP/links" >"$TMP/problems"

# --- 2. paths outside the repository ------------------------------------
# (the patterns are spelled so that this script does not match itself)
tr '\n' '\0' <"$TMP/text" |
    xargs -0 -r grep -n -H -E '(^|[^A-Za-z0-9_-])share[d]/|/wor[k]/|/hom[e]/[a-z]|/User[s]/' -- |
    sed 's/^/outside path: /' >>"$TMP/problems" || true

# --- 3. Markdown pages named in text must exist -------------------------
sed 's#.*/##' "$TMP/md" | sort -u >"$TMP/mdnames"
tr '\n' '\0' <"$TMP/text" |
    xargs -0 -r grep -o -n -H -E '[A-Za-z0-9_./:-]*[A-Za-z0-9_-]\.md\b' -- >"$TMP/named" || true
awk -v names="$TMP/mdnames" '
    BEGIN { while ((getline f < names) > 0) page[f] = 1 }
    {
        # FILE:LINE:WORD
        i = index($0, ":"); f = substr($0, 1, i - 1); rest = substr($0, i + 1)
        i = index(rest, ":"); ln = substr(rest, 1, i - 1); w = substr(rest, i + 1)
        if (w ~ /:\/\//) next                                      # a URL
        b = w
        sub(/.*[\/:]/, "", b)
        if (!(b in page)) print f ":" ln ": names " w ", which is not a page of the repository"
    }' "$TMP/named" >>"$TMP/problems"

if [ -s "$TMP/problems" ]; then
    cat "$TMP/problems"
    echo "check_links: FAILED (fix the lines above)"
    exit 1
fi
echo "check_links: $(wc -l <"$TMP/md") Markdown files, $(wc -l <"$TMP/text") text files: every link and page reference resolves"
