#!/bin/sh
# Build the kernel image offline (`make image`); a no-op when the image for the current
# Dockerfile + requirements.txt exists. Prints the image tag on its last line.
#   1. base: `debootstrap --variant=minbase bookworm` (python3, python3-venv) -> `docker import`
#      (no registry on these machines); BASE=<image> skips this and uses that image instead.
#   2. wheels: built or downloaded on the host into .cache/wheelhouse (pip inside a chroot
#      does not trust the registry proxy's certificate), for the host's Python 3.11.
#   3. `docker build --build-arg BASE=...`, tagged eegbench-kernel:<content hash>.
# Caches under .cache/ (gitignored): the base tarball and the wheelhouse.
set -eu
cd "$(dirname "$0")/.."
CACHE=.cache
PYTHON=${PYTHON:-python3}
TAG=$($PYTHON -m runner.sandbox.image tag)
# What the debootstrap base holds besides minbase: the interpreter (3.11, matching the
# wheels) and the shared libraries wheels expect from the system (libgomp1: lightgbm).
# A change here changes the image tag too (build.sh is hashed with the Dockerfile).
BASE_PACKAGES=python3,python3-venv,libgomp1
BASE_ID=$(printf '%s' "$BASE_PACKAGES" | sha256sum | cut -c1-12)
BASE_TAG=eegbench-base:bookworm-$BASE_ID
BASE_TAR=$CACHE/base-bookworm-$BASE_ID.tar

if docker image inspect "$TAG" >/dev/null 2>&1; then
    echo "$TAG"; exit 0
fi
mkdir -p "$CACHE"
t0=$(date +%s)

if [ -z "${BASE:-}" ]; then
    BASE=$BASE_TAG
    if ! docker image inspect "$BASE" >/dev/null 2>&1; then
        if [ ! -s "$BASE_TAR" ]; then
            command -v debootstrap >/dev/null 2>&1 || {
                [ "$(id -u)" = 0 ] || { echo "build.sh: install debootstrap (or set BASE=an image with python3.11)" >&2; exit 1; }
                apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
            # The host's own Debian mirror (none hard-coded here); debootstrap's default otherwise.
            MIRROR=$(grep -h -m1 -E '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
                     | head -1 | awk '{print $2}' || true)
            # debootstrap may leave proc/sys/dev/pts mounted in the rootfs (archive_rootfs.sh):
            # nothing is removed or archived before they are unmounted, and a failed or
            # interrupted run leaves none behind (its rootfs stays, for debootstrap's own log).
            trap 'st=$?; sh kernel_image/archive_rootfs.sh --unmount-only "$CACHE/rootfs" || true; exit $st' EXIT
            trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP
            sh kernel_image/archive_rootfs.sh --unmount-only "$CACHE/rootfs"
            rm -rf "$CACHE/rootfs"
            debootstrap --variant=minbase --include="$BASE_PACKAGES" bookworm "$CACHE/rootfs" $MIRROR >"$CACHE/debootstrap.log" 2>&1 \
                || { tail -20 "$CACHE/debootstrap.log" >&2; exit 1; }
            rm -rf "$CACHE/rootfs/var/cache/apt/archives/"*.deb "$CACHE/rootfs/var/lib/apt/lists/"*
            sh kernel_image/archive_rootfs.sh "$CACHE/rootfs" "$BASE_TAR"
            rm -rf "$CACHE/rootfs"
            trap - EXIT INT TERM HUP
        fi
        docker import "$BASE_TAR" "$BASE" >/dev/null
    fi
fi
t1=$(date +%s)

# Wheels for every pinned package and its dependencies, for the image's Python (bookworm:
# 3.11). A 3.11 host builds any sdist into a wheel; another host takes binary wheels only.
if [ "$($PYTHON -c 'import sys; print(sys.version_info[:2] == (3, 11))')" = True ]; then
    $PYTHON -m pip wheel -q -w "$CACHE/wheelhouse" -r kernel_image/requirements.txt
else
    plats=""
    for v in 2_17 2_24 2_27 2_28 2_31 2_34 2_35 2_36; do plats="$plats --platform manylinux_${v}_$(uname -m)"; done
    $PYTHON -m pip download -q -d "$CACHE/wheelhouse" --only-binary=:all: --python-version 3.11 \
        --implementation cp --abi cp311 --abi abi3 --abi none $plats --platform any \
        -r kernel_image/requirements.txt
fi
t2=$(date +%s)

CTX="$CACHE/image-context"
rm -rf "$CTX"; mkdir -p "$CTX"
cp kernel_image/Dockerfile kernel_image/requirements.txt "$CTX/"
cp -al "$CACHE/wheelhouse" "$CTX/wheelhouse"  # hard links: no copy of ~0.3 GB
docker build -q --build-arg BASE="$BASE" -t "$TAG" "$CTX" >/dev/null
rm -rf "$CTX"
t3=$(date +%s)
echo "image build: base $((t1 - t0)) s, wheels $((t2 - t1)) s, docker build $((t3 - t2)) s" >&2
echo "$TAG"
