#!/usr/bin/env bash
# Makes sure the servers the tests start are installed: PostgreSQL and MariaDB (JDBC source tests)
# and Redis (the cache-guard example), and Python's venv module (the Python reader's tests,
# sidecar-lib/python/test.sh: Debian ships it apart from python3). The tests start their own servers from these binaries on
# free ports; nothing is configured or started here.
#
# Missing Debian packages are installed when running as root (apt-get update once, then one
# apt-get install); otherwise one line says what to run, and the script fails.
# `mvn verify` runs it in its validate phase (skip with -DskipTestPrereqs; -DskipTests skips it
# too), and so does .ci/run. A machine that has them all does nothing.
set -euo pipefail
. "$(dirname "$0")/platform.sh"

missing=()
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing+=(postgresql)
{ [ -x /usr/sbin/mariadbd ] || command -v mariadbd >/dev/null; } || missing+=(mariadb-server)
{ [ -x /usr/bin/redis-server ] || command -v redis-server >/dev/null; } || missing+=(redis-server)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
# The logical-replication tests turn TLS on in their PostgreSQL with a certificate made by openssl.
command -v openssl >/dev/null || missing+=(openssl)

if [ ${#missing[@]} -eq 0 ]; then
  echo "test prerequisites: PostgreSQL, MariaDB, Redis, python3-venv and openssl are installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "test prerequisites: installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  echo "test prerequisites: installed ${missing[*]}"
  exit 0
fi

if ! command -v apt-get >/dev/null; then
  echo "test prerequisites: missing ${missing[*]}; the tests support $BLOOM_PLATFORMS (they use the Debian package layout)" >&2
  exit 1
fi
echo "test prerequisites: missing ${missing[*]}; run: sudo apt-get update && sudo apt-get install -y ${missing[*]} (or skip this check with -DskipTestPrereqs)" >&2
exit 1
