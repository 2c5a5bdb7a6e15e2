#!/bin/bash
# Runs systemd-analyze verify on the units in systemd/, with ExecStart pointed
# at the built binaries (verify checks that executables exist), and checks the
# sysusers.d and sysctl.d files that come with them.
# usage: verify-units.sh SRCDIR BINDIR
set -eu
src=$1; bin=$2
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not installed"; exit 77; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
for u in "$src"/systemd/*.service "$src"/systemd/*.target; do
    sed -e "s#/usr/local/bin/czk-gpud#$bin/gpud/czk-gpud#" \
        -e "s#/usr/local/bin/czk-synth#$bin/synth/czk-synth#" \
        -e "s#/usr/local/bin/czk-finalizer#$bin/finalizer/czk-finalizer#" "$u" > "$t/$(basename "$u")"
done
for b in gpud/czk-gpud synth/czk-synth finalizer/czk-finalizer; do
    [ -x "$bin/$b" ] || { echo "missing $bin/$b: build the daemons first"; exit 1; }
done
ln -s czk-synth@.service "$t/czk-synth@0.service"
units=$(cd "$t" && ls *.service *.target | grep -v '@\.service$')
echo "verifying:" $units
out=$(cd "$t" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no $units 2>&1) || { echo "$out"; exit 1; }
echo "$out"
# verify prints warnings without failing: any line about our units is an error
# (among them "Failed to parse NUMA node mask ... %i", which systemd < 254
# printed for NUMAMask=%i: the synth binds its node itself)
if echo "$out" | grep -E 'czk[-.@a-z0-9]*\.(service|target)'; then exit 1; fi

# every unit the target pulls in exists, and every unit file that was removed
# (czk-hugepages.service became systemd/czk-hugepages.sysctl) is named nowhere
for w in $(sed -n 's/^Wants=//p; s/^After=//p; s/^Before=//p' "$src"/systemd/*.service "$src"/systemd/*.target); do
    case $w in
    czk-synth@*.service) f=czk-synth@.service ;;
    czk*) f=$w ;;
    *) continue ;;
    esac
    [ -f "$src/systemd/$f" ] || { echo "a unit names $w, which systemd/ does not have"; exit 1; }
done

# the daemons' user: the units' User=/Group=/SupplementaryGroups= that are
# czk's own come from czk.sysusers (systemd-sysusers into a scratch root)
if command -v systemd-sysusers >/dev/null; then
    mkdir -p "$t/root/etc"
    : >"$t/root/etc/passwd"; : >"$t/root/etc/group"
    SYSTEMD_LOG_LEVEL=warning systemd-sysusers --root="$t/root" "$src/systemd/czk.sysusers" ||
        { echo "systemd-sysusers rejects systemd/czk.sysusers"; exit 1; }
    for n in $(sed -n 's/^User=//p; s/^Group=//p; s/^SupplementaryGroups=//p' "$src"/systemd/*.service | tr ' ' '\n' | sort -u); do
        case $n in video) continue ;; esac # a host group (/dev/nvidia* with NVreg_DeviceFileGID)
        grep -q "^$n:" "$t/root/etc/group" || { echo "group $n of the units is not in czk.sysusers"; exit 1; }
    done
    grep -q '^czk:x:[0-9]*:[0-9]*:.*:/usr/sbin/nologin$\|^czk:x:[0-9]*:[0-9]*:.*nologin' "$t/root/etc/passwd" ||
        { echo "czk.sysusers does not create a czk user without a login shell"; cat "$t/root/etc/passwd"; exit 1; }
else
    echo "(systemd-sysusers not installed: czk.sysusers not checked)"
fi

# the hugepage reservation is a sysctl.d file: one valid vm.nr_hugepages line
n=$(grep -c '^vm\.nr_hugepages *= *[0-9][0-9]*$' "$src/systemd/czk-hugepages.sysctl")
[ "$n" = 1 ] || { echo "czk-hugepages.sysctl: want exactly one vm.nr_hugepages = N line"; exit 1; }
if grep -v '^#' "$src/systemd/czk-hugepages.sysctl" | grep -v '^vm\.nr_hugepages' | grep -q .; then
    echo "czk-hugepages.sysctl: unexpected lines"; exit 1
fi
echo "systemd units verified"
