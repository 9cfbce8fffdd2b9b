#!/usr/bin/env bash
# Prepares what the tests need beyond npm packages, on a fresh machine, so that the README's test
# command alone is enough: Debian's iptables (the capture rules are loaded for real in a private
# network namespace), Debian's prometheus (the metrics add-on `meshctl x metrics` queries), dig
# from Debian's bind9-dnsutils (the agent's DNS proxy is asked with it) and the real helm and
# kubectl binaries (in the git-ignored .tools/bin).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v iptables-restore >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "prepare-test-env: installing Debian's iptables"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iptables >/dev/null
  else
    echo "prepare-test-env: iptables-restore is missing and cannot be installed here (needs root and apt-get); the tests that load rules will say so"
  fi
fi

if ! command -v prometheus >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "prepare-test-env: installing Debian's prometheus"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "prepare-test-env: prometheus is missing and cannot be installed here (needs root and apt-get); the tests that scrape the mesh will say so"
  fi
fi

if ! command -v dig >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "prepare-test-env: installing Debian's bind9-dnsutils (dig)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bind9-dnsutils >/dev/null
  else
    echo "prepare-test-env: dig is missing and cannot be installed here (needs root and apt-get); the DNS proxy tests will fail saying so"
  fi
fi

bash scripts/get-helm-kubectl.sh .tools/bin >/dev/null
