#!/usr/bin/env bash
# The set-up `npm test` does on its own, so that the README's test command passes on a fresh
# machine with nothing skipped: the Debian packages the tests drive for real (a Secret
# Service for the keychain tests, tmux for the terminal tests, Chromium for the panel's
# browser tests, bubblewrap for the sandbox, python3 for a fixture), installed with apt-get
# (through sudo when not root) only when one is missing. WISP_TEST_SETUP=0 skips it.
set -uo pipefail
[ "${WISP_TEST_SETUP:-1}" = 0 ] && exit 0

PACKAGES=(gnome-keyring dbus-daemon dbus-bin libsecret-tools tmux chromium bubblewrap python3)
WHAT="gnome-keyring and D-Bus (keychain tests), tmux (terminal tests), Chromium (panel tests), bubblewrap (sandbox tests), python3"

if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
  echo "test setup: not a Debian or Ubuntu system: install $WHAT yourself; the tests that need one that is missing are skipped" >&2
  exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "test setup: missing Debian packages ${missing[*]}, and no sudo to install them: as root, run apt-get install ${missing[*]}; until then their tests are skipped" >&2
      exit 0
    fi
    # sudo asks for a password on a terminal; with no terminal it must not hang.
    if [ -t 0 ]; then SUDO=(sudo); elif sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
      echo "test setup: missing Debian packages ${missing[*]}: sudo needs a password and there is no terminal to ask on: run sudo apt-get install ${missing[*]}; until then their tests are skipped" >&2
      exit 0
    fi
  fi
  echo "test setup: installing the Debian packages the tests need: ${missing[*]} (${SUDO[*]:-as root} apt-get)" >&2
  if ! { "${SUDO[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
    echo "test setup: apt-get could not install ${missing[*]}: the tests that need them are skipped (or fail where WISP_REQUIRE_* asks for them)" >&2
    exit 0
  fi
fi

if [ ! -d .cache ]; then
  echo "test setup: on this first run the tests fetch from the npm registry into .cache/ (about 370 MB, kept for later runs): Node 22 and npm 12 (the install tests), Node 24, the MCP conformance suite and the MCP Inspector" >&2
fi
exit 0
