#!/usr/bin/env bash
# Runs vitest. Where gnome-keyring and D-Bus are installed, it first starts a private D-Bus
# session bus and a fresh, unlocked gnome-keyring on it (HOME and XDG dirs isolated, so the
# user's own keyring is never touched), so the Secret Service tests run against the real
# thing. Both daemons get no access to our stdout/stderr and are stopped at the end.
set -uo pipefail

# The suite on this machine's node; then, for a whole run (no arguments), the unit and
# gateway tests again on each newer LTS line (scripts/npm12-runtime.mjs OTHER_NODE_VERSIONS,
# fetched from the npm registry into .cache/), each with a report of its own
# (test-results/vitest-node<version>.json; .ci/run adds them up). WISP_TEST_OTHER_NODES=0 skips those;
# WISP_TEST_NODE_BIN=<dir> runs the given files on the node in <dir> instead.
run_suite() {
  local status
  if [ -n "${WISP_TEST_NODE_BIN:-}" ]; then
    # One further release's node (scripts/ci-report.mjs reruns the files it failed on it).
    PATH="$WISP_TEST_NODE_BIN:$PATH" "$WISP_TEST_NODE_BIN/node" node_modules/vitest/vitest.mjs run "$@"
    return $?
  fi
  npx vitest run "$@"
  status=$?
  [ "$#" -gt 0 ] && return "$status"
  [ "${WISP_TEST_OTHER_NODES:-1}" = 0 ] && return "$status"
  local versions
  if ! versions=$(node scripts/npm12-runtime.mjs --node); then
    echo "test.sh: could not fetch the other Node.js releases from the npm registry" >&2
    return 1
  fi
  while read -r version bin; do
    echo "== the unit and gateway tests on node $version" >&2
    WISP_TEST_REPORT="test-results/vitest-node$version.json" PATH="$bin:$PATH" "$bin/node" node_modules/vitest/vitest.mjs run test/unit test/integration/gateway || status=1
  done <<<"$versions"
  return "$status"
}

if command -v dbus-daemon >/dev/null && command -v gnome-keyring-daemon >/dev/null; then
  sandbox=$(mktemp -d)
  bus_pid=""
  cleanup() {
    [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
    [ -n "${keyring_pid:-}" ] && kill "$keyring_pid" 2>/dev/null
    rm -rf "$sandbox"
  }
  trap cleanup EXIT
  mkdir -p "$sandbox/home" "$sandbox/data" "$sandbox/config" "$sandbox/run" && chmod 700 "$sandbox/run"
  export HOME="$sandbox/home" XDG_DATA_HOME="$sandbox/data" XDG_CONFIG_HOME="$sandbox/config" XDG_RUNTIME_DIR="$sandbox/run"
  dbus-daemon --session --fork --nopidfile --print-address=3 --print-pid=4 3>"$sandbox/bus-address" 4>"$sandbox/bus-pid" </dev/null >/dev/null 2>&1
  bus_pid=$(head -n1 "$sandbox/bus-pid")
  DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$sandbox/bus-address")
  export DBUS_SESSION_BUS_ADDRESS
  # --unlock reads the new keyring's password from stdin; the daemon forks once it is ready.
  printf wisp-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
  keyring_pid=$(pgrep -n -u "$(id -u)" gnome-keyring-d || true)
  WISP_TEST_KEYRING=1 run_suite "$@"
  exit $?
fi
if [ "${WISP_REQUIRE_KEYRING:-}" = 1 ]; then
  echo "test.sh: WISP_REQUIRE_KEYRING=1 but dbus-daemon or gnome-keyring-daemon is missing" >&2
  exit 1
fi
echo "test.sh: gnome-keyring/D-Bus not installed: the Secret Service tests are skipped (apt-get install gnome-keyring dbus-daemon)" >&2
run_suite "$@"
exit $?
