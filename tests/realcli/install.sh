#!/usr/bin/env bash
# Installs the real agent CLIs pinned in pins.txt, each into its own npm prefix under
# $SLMACTOR_REALCLI_DIR (default: .realcli/ in the repository, gitignored), so the end-to-end
# tests in this folder can run them. Best effort: a CLI that cannot be installed (no npm, no
# network, unsupported platform) is reported on stderr and its test skips with that reason; the
# script itself always exits 0. An already installed pin is kept (a stamp file marks a complete
# install), so a warm cache costs nothing.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest="${SLMACTOR_REALCLI_DIR:-$repo/.realcli}"
pins="$here/pins.txt"

if ! command -v npm >/dev/null 2>&1; then
  echo "warning: npm not found; the real-CLI tests (tests/realcli) will be skipped" >&2
  exit 0
fi
mkdir -p "$dest" || { echo "warning: cannot create $dest; real-CLI tests will be skipped" >&2; exit 0; }

failed=""
while read -r name package version binary; do
  case "$name" in ''|'#'*) continue ;; esac
  prefix="$dest/$name-$version"
  stamp="$prefix/.installed"
  if [ -f "$stamp" ] && [ -x "$prefix/node_modules/.bin/$binary" ]; then
    echo "   $name $version: already installed in $prefix"
    continue
  fi
  rm -rf "$prefix"
  mkdir -p "$prefix"
  start=$(date +%s)
  # --prefix with a private package.json keeps each CLI's tree apart (no hoisting across CLIs);
  # --ignore-scripts stays off: Claude Code's postinstall places its native binary.
  echo '{"private": true}' >"$prefix/package.json"
  if (cd "$prefix" && npm install --no-audit --no-fund --no-save --loglevel=error \
        --prefix "$prefix" "$package@$version" >"$prefix/install.log" 2>&1) \
      && [ -x "$prefix/node_modules/.bin/$binary" ]; then
    end=$(date +%s)
    printf '%s %s %s\n' "$package" "$version" "$((end - start))s" >"$stamp"
    echo "   $name $version: installed in $((end - start)) s"
  else
    failed="$failed $name"
    echo "warning: could not install $package@$version (log: $prefix/install.log); its real-CLI test will be skipped" >&2
    tail -n 5 "$prefix/install.log" >&2 2>/dev/null || true
  fi
done <"$pins"

# OpenCode installs its plugin package (@opencode-ai/plugin, the binary's own version) into every
# config folder it reads (`.opencode/`, `~/.config/opencode/`) before it loads a plugin, retrying
# the registry for about a minute when it cannot be reached. Offline tests give each folder this
# staged copy (node_modules, package.json, package-lock.json), which OpenCode finds in sync.
oc_version=$(awk '$1 == "opencode" {print $3}' "$pins")
oc_deps="$dest/opencode-$oc_version/config-deps"
if [ -n "$oc_version" ] && [ -f "$dest/opencode-$oc_version/.installed" ] && [ ! -f "$oc_deps/.installed" ]; then
  rm -rf "$oc_deps"; mkdir -p "$oc_deps"
  echo '{"private": true}' >"$oc_deps/package.json"
  if (cd "$oc_deps" && npm install --no-audit --no-fund --loglevel=error \
        "@opencode-ai/plugin@$oc_version" >"$oc_deps/install.log" 2>&1); then
    touch "$oc_deps/.installed"
    echo "   opencode $oc_version: its plugin package staged in $oc_deps"
  else
    failed="$failed opencode-config-deps"
    echo "warning: could not stage @opencode-ai/plugin@$oc_version (log: $oc_deps/install.log)" >&2
  fi
fi

# The OpenHands SDK (Python >= 3.12, heavy dependencies) is not installed: its wheel is kept, and
# tests/realcli/test_openhands_sdk_hooks_file.py loads the SDK's own hooks-file reader from it.
oh_version=1.58.2
if ! ls "$dest/openhands-sdk/openhands_sdk-$oh_version-"*.whl >/dev/null 2>&1; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
      -d "$dest/openhands-sdk" "openhands-sdk==$oh_version" >/dev/null 2>&1 \
    || { failed="$failed openhands-sdk"; echo "warning: could not download openhands-sdk $oh_version" >&2; }
fi

[ -z "$failed" ] || echo "warning: real CLIs not installed:$failed" >&2
exit 0
