#!/bin/sh
# Make sure a Docker daemon answers on this machine (`make docker`); idempotent.
# Installs Debian's docker.io when dockerd is missing and starts dockerd in the background
# when the daemon does not answer (these machines run no init system). Exits non-zero when
# the daemon cannot be brought up: Docker is not optional where this script is called.
set -eu
LOG=${DOCKERD_LOG:-/var/log/eegbench-dockerd.log}

answers() { docker info >/dev/null 2>&1; }

if answers; then exit 0; fi
if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || { echo "docker-up: dockerd missing and not root: install docker.io" >&2; exit 1; }
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
fi
if answers; then exit 0; fi
[ "$(id -u)" = 0 ] || { echo "docker-up: the daemon does not answer and only root can start it" >&2; exit 1; }

start() {  # $1: storage driver
    rm -f /var/run/docker.pid
    nohup dockerd --storage-driver="$1" >>"$LOG" 2>&1 &
    i=0
    while [ $i -lt 60 ]; do
        if answers; then echo "docker-up: dockerd running (storage driver $1, log $LOG)"; return 0; fi
        kill -0 $! 2>/dev/null || return 1
        sleep 0.5; i=$((i + 1))
    done
    kill $! 2>/dev/null || true
    return 1
}

start overlay2 || start vfs || { echo "docker-up: dockerd did not start; see $LOG:" >&2; tail -20 "$LOG" >&2; exit 1; }
