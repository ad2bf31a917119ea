#!/usr/bin/env bash
# Installs what zkherd needs and is missing: Go (Debian's go, which then fetches
# the toolchain go.mod asks for), Java and Apache ZooKeeper from apt-get, and the
# Go modules. Safe to run again: it only installs what is missing.
set -euo pipefail

need=()
command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || need+=(golang-go)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
[ -f /usr/share/java/zookeeper.jar ] || [ -n "${ZOOKEEPER_HOME:-}" ] || command -v zkServer.sh >/dev/null 2>&1 || need+=(zookeeper)
# The Curator interop test compiles a small Java program against Debian's Curator jars.
[ -f /usr/share/java/curator-recipes.jar ] || need+=(libcurator-recipes-java)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
# Foreign clients, monitoring and remote launch, used by the tests: python3-kazoo
# (the inspector's foreign layouts), Prometheus and promtool (the metrics
# endpoints and the shipped alerting rules), an OpenSSH server (the --hosts
# launcher, started by its test on loopback), kubectl. Tests run Debian's /usr/bin/python3,
# which sees python3-kazoo whatever python3 comes first on PATH.
/usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1 || need+=(python3-kazoo)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
# kubectl checks the Kubernetes manifests (docs/deploy/kubernetes, client-side
# dry run); chroot (coreutils) runs the image's binary in an empty root.
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)

if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} (apt-get)" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup: need root or sudo to apt-get install ${need[*]}" >&2; exit 2; }
    SUDO=sudo
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

export PATH="$PATH:/usr/local/go/bin"
# An older Go fetches the toolchain go.mod names through the module proxy.
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
go mod download

# staticcheck runs in make test (and so in CI); installed through the Go
# module proxy, pinned, when missing.
staticcheck_version=v0.8.2
if ! "$(go env GOPATH)/bin/staticcheck" -version 2>/dev/null | grep -q "${staticcheck_version#v}"; then
  echo "setup: installing staticcheck ${staticcheck_version} (go install)" >&2
  go install "honnef.co/go/tools/cmd/staticcheck@${staticcheck_version}"
fi
