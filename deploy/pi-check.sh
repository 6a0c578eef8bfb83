#!/usr/bin/env bash
# make pi-check: the aarch64 bundle installed and run on an emulated arm64 Debian Bookworm (the base
# of Raspberry Pi OS), as on a Pi with no network (issue 33). Not part of `make test`: it takes tens
# of minutes (qemu runs CPU-bound code about 7x slower than native).
#
# 1. The arm64 root file system: mmdebstrap --arch=arm64 --variant=apt bookworm with python3,
#    python3-venv, systemd, udev (about 25 min), built once and cached in
#    ${XDG_CACHE_HOME:-~/.cache}/tablectl/bookworm-arm64; each run works on a fresh copy of it.
#    It runs through qemu-user-static and binfmt_misc (Debian: qemu-user-static binfmt-support
#    mmdebstrap arch-test: mmdebstrap needs arch-test for a foreign architecture; run as root).
# 2. `make bundle`'s linux-aarch64 bundle, and pytest and hypothesis as aarch64 wheels for step 5
#    (these downloads are the only use of the network, before the copy is entered).
# 3. In the copy, with the network switched off (a new network namespace, loopback only):
#    install.sh --no-start (no systemd runs in a chroot).
# 4. `tablectl run --sim --demo` of the installed release until /api/health answers and a round settles.
# 5. tests/engine, the games' tests (tests/games/<game>/) and tests/drivers against the installed
#    release (the tests and the documents they read are copied in, not the source), less the cases marked `native_timing` (timing qemu cannot hold; each says
#    why, and they run natively in `make test`).
# Prints each step's time; README.md's table keeps the last ones.
set -euo pipefail
export LC_ALL=C.UTF-8

CHECKOUT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/tablectl
BASE=$CACHE/bookworm-arm64
PYTHON=${PYTHON:-python3}
VERSION=$("$PYTHON" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' "$CHECKOUT/pyproject.toml")
NAME=tablectl-$VERSION-linux-aarch64
# The manylinux tags an arm64 Bookworm (glibc 2.36) runs, for the test tools' wheels.
PLATFORMS=()
for minor in $(seq 36 -1 17); do PLATFORMS+=(--platform "manylinux_2_${minor}_aarch64"); done

say() { echo "pi-check: $*"; }
die() { echo "pi-check: FAILED: $*" >&2; exit 1; }
now() { date +%s; }
TIMES=()
took() { TIMES+=("$(printf '%-44s %5d s' "$1" $(( $(now) - $2 )))"); say "$1: $(( $(now) - $2 )) s"; }

if [ "${1:-}" = "--inside" ]; then
    # Run by the outer part in new network, mount and PID namespaces: nothing here reaches a network
    # (the loopback device only), and the mounts below end with the namespace.
    WORK=$2
    ip link set lo up
    mount --make-rprivate /
    mount -t proc proc "$WORK/proc"
    mount --rbind /dev "$WORK/dev"
    mount -t sysfs sysfs "$WORK/sys"
    in_root() { chroot "$WORK" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }
    if in_root python3 -c 'import socket; socket.create_connection(("deb.debian.org", 80), timeout=5)' 2>/dev/null; then
        die "the network is reachable inside the check: it must be off"
    fi

    t=$(now)
    say "install.sh --no-start, network off"
    in_root "/tmp/$NAME/install.sh" --no-start | sed -u 's/^/    /'
    took "install.sh (venv, pip install --no-index)" "$t"
    in_root /opt/tablectl/current/bin/python -c 'import lgpio, cv2, numpy; print("    lgpio, cv2 and numpy import: lgpio", lgpio.__file__)'

    t=$(now)
    say "tablectl run --sim --demo, until a round settles"
    in_root sh -c 'umask 077; mkdir -p /tmp/pi-check-state; echo pi-check-dealer-token-0001 > /tmp/pi-check-dealer-token; echo pi-check-supervisor-token-01 > /tmp/pi-check-supervisor-token'
    # chroot itself in the background (not in_root, whose subshell would be the PID), to stop it by its PID.
    chroot "$WORK" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
        TABLECTL_DEALER_TOKEN_FILE=/tmp/pi-check-dealer-token TABLECTL_SUPERVISOR_TOKEN_FILE=/tmp/pi-check-supervisor-token \
        /opt/tablectl/current/bin/tablectl run --sim --demo --state-dir /tmp/pi-check-state --http 127.0.0.1:8000 \
        > "$WORK/tmp/pi-check-run.log" 2>&1 &
    daemon=$!
    # Polls the daemon; 900 s is a backstop for a slow emulation, not a measure.
    if ! in_root /opt/tablectl/current/bin/python - <<'PY'
import json, time, urllib.request
start, healthy, deadline = time.monotonic(), None, time.monotonic() + 900
def get(path):
    req = urllib.request.Request("http://127.0.0.1:8000" + path, headers={"Authorization": "Bearer pi-check-dealer-token-0001"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)
while time.monotonic() < deadline:
    try:
        if healthy is None and get("/api/health")["status"] == "ok":
            healthy = time.monotonic() - start
            print(f"    /api/health ok after {healthy:.0f} s")
        rounds = get("/api/rounds?last=5")["rounds"] if healthy is not None else []
        settled = [r for r in rounds if r.get("status") == "settled"]
        if settled:
            print(f"    round {settled[0].get('round')} settled after {time.monotonic() - start:.0f} s")
            raise SystemExit(0)
    except OSError:
        pass
    time.sleep(2)
raise SystemExit("no settled round within 900 s")
PY
    then
        tail -n 20 "$WORK/tmp/pi-check-run.log"
        kill "$daemon"
        die "the simulated table did not settle a round"
    fi
    kill "$daemon"
    wait "$daemon" || true
    took "tablectl run --sim --demo to a settled round" "$t"

    t=$(now)
    say "pytest and hypothesis into the (throwaway) release, from wheels, network off"
    in_root /opt/tablectl/current/bin/python "/tmp/$NAME/wheels/$(cd "$WORK/tmp/$NAME/wheels" && ls pip-*.whl)/pip" \
        install --quiet --no-index --find-links /tmp/test-wheels --disable-pip-version-check pytest hypothesis
    say "tests/engine, tests/games/<game> and tests/drivers against the installed release (not native_timing)"
    rc=0
    in_root sh -c 'cd /tmp/tablectl-tests && CI=true /opt/tablectl/current/bin/python -m pytest -q -p no:cacheprovider -m "not native_timing" tests/engine tests/games/grand_slam tests/games/jokers22 tests/games/baseball tests/drivers' \
        2>&1 | sed -u 's/^/    /' || rc=$?
    took "tests/engine, tests/games/<game> and tests/drivers" "$t"
    printf '%s\n' "${TIMES[@]}" > "$WORK/tmp/pi-check-times"
    exit "$rc"
fi

[ "$(id -u)" = 0 ] || die "run as root (mmdebstrap, chroot and network namespaces need it): sudo make pi-check"
for tool in mmdebstrap arch-test unshare chroot ip; do
    command -v "$tool" >/dev/null || die "$tool is missing: apt-get install mmdebstrap arch-test qemu-user-static binfmt-support iproute2"
done
[ -x /usr/bin/qemu-aarch64-static ] || die "qemu-aarch64-static is missing: apt-get install qemu-user-static binfmt-support"
mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64
grep -q enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 || die "binfmt_misc has no qemu-aarch64: update-binfmts --enable qemu-aarch64"
START=$(now)

if [ -d "$BASE" ]; then
    say "the arm64 root: $BASE (cached)"
else
    t=$(now)
    say "building the arm64 Bookworm root into $BASE (about 25 min, once)"
    mkdir -p "$CACHE"
    rm -rf "$BASE.partial"
    nice -n 10 mmdebstrap --arch=arm64 --variant=apt --include=python3,python3-venv,systemd,udev,ca-certificates,procps \
        bookworm "$BASE.partial" http://deb.debian.org/debian
    mv "$BASE.partial" "$BASE"
    took "mmdebstrap arm64 bookworm (cached after)" "$t"
fi

t=$(now)
say "make bundle: $NAME.tar.gz"
"$PYTHON" "$CHECKOUT/deploy/bundle.py" --platform linux-aarch64
took "bundle (wheel, aarch64 wheels, archive)" "$t"

WORK=$(mktemp -d /tmp/tablectl-pi-check.XXXXXX)
cleanup() { rm -rf --one-file-system "$WORK"; }
trap cleanup EXIT
t=$(now)
say "a fresh copy of the root in $WORK/root"
cp -a "$BASE" "$WORK/root"
tar xzf "$CHECKOUT/dist/$NAME.tar.gz" -C "$WORK/root/tmp"
# The tests and the documents they compare with (README.md's figures, hardware/*.md's tables);
# hardware/ without its Python files, so `import hardware` is the installed release's.
mkdir -p "$WORK/root/tmp/tablectl-tests/hardware"
cp -a "$CHECKOUT/tests" "$CHECKOUT/pyproject.toml" "$CHECKOUT/README.md" "$WORK/root/tmp/tablectl-tests/"
cp -a "$CHECKOUT"/hardware/*.md "$WORK/root/tmp/tablectl-tests/hardware/"
env -i PATH=/usr/bin:/bin HOME="$HOME" PIP_CONFIG_FILE=/dev/null PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    "$PYTHON" -m pip download --quiet --disable-pip-version-check --only-binary=:all: "${PLATFORMS[@]}" \
    --python-version 3.11 --implementation cp --abi cp311 --abi abi3 --abi none \
    --dest "$WORK/root/tmp/test-wheels" pytest hypothesis
took "copy of the root, bundle and test wheels in" "$t"

rc=0
unshare --net --mount --pid --fork bash "$0" --inside "$WORK/root" || rc=$?
echo
say "times (qemu-user-static on $(nproc) cores of $(uname -m), $(date -u +%Y-%m-%d)):"
printf '%s\n' "${TIMES[@]}"
[ -f "$WORK/root/tmp/pi-check-times" ] && cat "$WORK/root/tmp/pi-check-times"
printf '%-44s %5d s\n' "total" $(( $(now) - START ))
[ "$rc" = 0 ] || die "see above (exit $rc)"
say "passed"
