#!/usr/bin/env bash
# A one-node Kubernetes cluster on this machine, without Docker or kind: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, containerd (Debian's package), kubelet and kube-proxy
# (iptables mode), a bridge CNI network. For trying the README's quickstart where kind cannot run
# (docs/local-cluster.md). Every Kubernetes binary is built from Go modules at the version of
# hack/kube-versions.env, like the test binaries (hack/build-kube-binaries.sh).
#
# Usage (as root):
#   bash hack/local-cluster.sh start          build what is missing, start everything, wait for the node
#   bash hack/local-cluster.sh load IMAGE.tar import an OCI or Docker image tarball for pods to use
#   bash hack/local-cluster.sh status         which processes run; kubectl get nodes
#   bash hack/local-cluster.sh stop           remove the pods' containers and network, stop everything
#   bash hack/local-cluster.sh delete         stop, then remove the state directory (the cluster's data)
#   bash hack/local-cluster.sh build          only build the binaries
# Then: export KUBECONFIG=<state dir>/kubeconfig (start prints it).
#
# Environment:
#   BLOOM_LOCAL_CLUSTER_DIR  state directory (default /tmp/bloom-local-cluster): certificates,
#                            etcd's data, containerd's root, kubelet's directory, logs, pid files
#   LOCAL_CLUSTER_API_PORT   kube-apiserver's port (default 16443); the other ports are fixed, below
#
# start and stop are idempotent. What it changes outside the state directory, and stop undoes:
# the iptables chains kube-proxy adds (removed with `kube-proxy --cleanup`; no table is flushed),
# the bridge bloom0, and the sysctls kubelet and the bridge plugin set (vm.overcommit_memory,
# kernel.panic, kernel.panic_on_oops, net.ipv4.ip_forward: their values before start are restored).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/kube-versions.sh"
STATE="${BLOOM_LOCAL_CLUSTER_DIR:-/tmp/bloom-local-cluster}"
SERVER_BIN="$KUBE_SERVER_BIN"
NODE_BIN="$HOME/.cache/bloom-operator/local-cluster-bin/${KUBE_VERSION}-${BLOOM_OS_ARCH}"
SRC="${KUBE_BINARIES_WORK:-$HOME/.cache/bloom-operator/kube-binaries-src}"
CRI_TOOLS_VERSION=v1.34.0
PAUSE_IMAGE=registry.k8s.io/pause:3.10.1

# Ports away from the defaults, so a cluster or test server already on this machine is not hit.
API_PORT="${LOCAL_CLUSTER_API_PORT:-16443}"
ETCD_PORT=12379
ETCD_PEER_PORT=12380
KUBELET_PORT=20250
KUBELET_HEALTHZ_PORT=20248
CM_PORT=20257
SCHEDULER_PORT=20259
PROXY_METRICS_PORT=20249
PROXY_HEALTHZ_PORT=20256
SERVICE_CIDR=10.96.0.0/16
SERVICE_IP=10.96.0.1
POD_CIDR=10.244.0.0/24
BRIDGE=bloom0
SYSCTLS="vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward"

log() { echo "local-cluster: $*"; }
die() { echo "local-cluster: $*" >&2; exit 1; }
sock() { echo "$STATE/containerd/containerd.sock"; }
ctr_() { ctr --address "$(sock)" -n k8s.io "$@"; }
crictl_() { "$NODE_BIN/crictl" --runtime-endpoint "unix://$(sock)" --timeout 30s "$@"; }
kubectl_() { "$NODE_BIN/kubectl" --kubeconfig "$STATE/kubeconfig" "$@"; }

running() { # running NAME: its recorded process is alive
  local f="$STATE/pids/$1.pid"
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

launch() { # launch NAME COMMAND...: in its own session, output to logs/NAME.log, pid recorded
  local name=$1; shift
  if running "$name"; then
    log "$name already running (pid $(cat "$STATE/pids/$name.pid"))"
    return
  fi
  setsid "$@" >>"$STATE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/pids/$name.pid"
  log "$name started (pid $!, log $STATE/logs/$name.log)"
}

halt() { # halt NAME: TERM, then KILL after 10 s
  local f="$STATE/pids/$1.pid" pid i
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
    log "$1 stopped (pid $pid)"
  fi
  rm -f "$f"
}

wait_for() { # wait_for SECONDS WHAT COMMAND...
  local secs=$1 what=$2 i; shift 2
  for i in $(seq 1 "$secs"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  die "$what not ready after ${secs}s; see $STATE/logs/"
}

check_host() {
  [ "$(id -u)" = 0 ] || die "needs root (containerd, kubelet and kube-proxy manage namespaces, cgroups and iptables)"
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v conntrack >/dev/null || missing+=(conntrack)
  command -v openssl >/dev/null || missing+=(openssl)
  if [ ${#missing[@]} -gt 0 ]; then
    die "missing packages: apt-get install -y --no-install-recommends ${missing[*]}"
  fi
}

# --- binaries -----------------------------------------------------------------------------------
build() {
  command -v go >/dev/null || die "Go is needed to build the Kubernetes binaries"
  # etcd, kube-apiserver, kube-controller-manager (and the Go module the others are built from)
  KUBE_VERSION="$KUBE_VERSION" bash "$HERE/build-kube-binaries.sh" >/dev/null
  local want="kubernetes v${KUBE_VERSION} (versioned) cri-tools ${CRI_TOOLS_VERSION}"
  if [ -f "$NODE_BIN/.built-from" ] && [ "$(cat "$NODE_BIN/.built-from")" = "$want" ]; then
    return
  fi
  log "building kubelet, kube-scheduler, kube-proxy, kubectl v${KUBE_VERSION}, crictl ${CRI_TOOLS_VERSION} and pause into $NODE_BIN"
  mkdir -p "$NODE_BIN"
  export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -trimpath"
  # The same module set as the test binaries (same Kubernetes release and staging replacements),
  # in a directory of its own so that build-kube-binaries.sh's module stays as it writes it.
  local k8s="$SRC/kubernetes-node"
  mkdir -p "$k8s"
  cp "$SRC/kubernetes/go.mod" "$SRC/kubernetes/go.sum" "$k8s/"
  cat >"$k8s/tools.go" <<'GO'
//go:build tools

// Package tools pins the commands this module builds.
package tools

import (
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)
GO
  # The version a release build stamps (kubelet reports it as the node's; kubectl version parses
  # its own): built from modules, it would be v0.0.0-master+$Format:%H$.
  local v=k8s.io/component-base/version minor=${KUBE_VERSION#*.}
  local ldflags="-X $v.gitVersion=v${KUBE_VERSION} -X $v.gitMajor=${KUBE_VERSION%%.*} -X $v.gitMinor=${minor%%.*}"
  (cd "$k8s" && go mod tidy && go build -ldflags "$ldflags" -o "$NODE_BIN/" k8s.io/kubernetes/cmd/kubelet \
    k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
  # crictl: stop removes the pods through the CRI, so that their network is torn down properly.
  local cri="$SRC/cri-tools"
  mkdir -p "$cri"
  (cd "$cri" && rm -f go.mod go.sum && go mod init bloomoperator.io/hack/cri-tools >/dev/null 2>&1 \
    && printf '//go:build tools\n\npackage tools\n\nimport _ "sigs.k8s.io/cri-tools/cmd/crictl"\n' >tools.go \
    && go get "sigs.k8s.io/cri-tools@${CRI_TOOLS_VERSION}" && go mod tidy \
    && go build -o "$NODE_BIN/crictl" sigs.k8s.io/cri-tools/cmd/crictl)
  # The pod sandbox image: registry.k8s.io cannot be reached from every machine, and the pause
  # process is a few lines (hold the namespaces, reap children, exit on SIGTERM).
  local pause="$SRC/pause"
  mkdir -p "$pause"
  cat >"$pause/main.go" <<'GO'
// Command pause is the pod sandbox's process: it holds the pod's namespaces, reaps zombies and
// exits on SIGINT or SIGTERM, as registry.k8s.io/pause does.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
GO
  printf 'module bloomoperator.io/hack/pause\n\ngo 1.22\n' >"$pause/go.mod"
  (cd "$pause" && go build -ldflags='-s -w' -o "$NODE_BIN/pause" .)
  echo "$want" >"$NODE_BIN/.built-from"
}

pause_image() { # an OCI image layout tarball holding /pause, entrypoint /pause
  local w out=$1 ld ls cd cs md ms
  w=$(mktemp -d)
  mkdir -p "$w/root" "$w/layout/blobs/sha256"
  cp "$NODE_BIN/pause" "$w/root/pause"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$w/root" -cf "$w/layer.tar" pause
  blob() { local d; d=$(sha256sum "$1" | cut -c1-64); cp "$1" "$w/layout/blobs/sha256/$d"; echo "$d $(stat -c%s "$1")"; }
  read -r ld ls < <(blob "$w/layer.tar")
  printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "${BLOOM_OS_ARCH#linux-}" "$ld" >"$w/config.json"
  read -r cd cs < <(blob "$w/config.json")
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "$cd" "$cs" "$ld" "$ls" >"$w/manifest.json"
  read -r md ms < <(blob "$w/manifest.json")
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
    "$md" "$ms" "$PAUSE_IMAGE" >"$w/layout/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$w/layout/oci-layout"
  tar -C "$w/layout" -cf "$out" oci-layout index.json blobs
  rm -rf "$w"
}

# --- configuration ------------------------------------------------------------------------------
node_ip() {
  ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p' | head -1
}

certs() { # a CA, the API server's certificate, an admin and a kubelet client certificate, SA keys
  local pki="$STATE/pki" ip=$1 node=$2
  [ -f "$pki/kubelet.crt" ] && return
  mkdir -p "$pki"
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj /CN=bloom-local-ca 2>/dev/null
    issue() { # issue NAME SUBJECT [SANs]
      openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
      if [ -n "${3:-}" ]; then printf 'subjectAltName=%s\n' "$3" >"$1.ext"; else : >"$1.ext"; fi
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -out "$1.crt" -extfile "$1.ext" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    issue apiserver /CN=kube-apiserver \
      "IP:127.0.0.1,IP:$ip,IP:$SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    issue admin "/O=system:masters/CN=local-cluster-admin"
    issue kubelet "/O=system:nodes/CN=system:node:$node"
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  )
}

has_cap_sys_resource() { # capability 24 in this process's effective set
  local eff
  eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
  (( (16#$eff >> 24) & 1 ))
}

kubeconfig() { # kubeconfig FILE CERT-NAME
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$STATE/pki/ca.crt"}
users:
- name: $2
  user: {client-certificate: "$STATE/pki/$2.crt", client-key: "$STATE/pki/$2.key"}
contexts:
- name: bloom-local
  context: {cluster: local, user: $2}
current-context: bloom-local
EOF
}

write_configs() {
  local ip=$1 node=$2 restrict_oom=false
  if ! has_cap_sys_resource; then
    restrict_oom=true
    log "no CAP_SYS_RESOURCE here: pods run with oom_score_adj no lower than containerd's"
  fi
  kubeconfig "$STATE/kubeconfig" admin
  kubeconfig "$STATE/kubelet.kubeconfig" kubelet
  cat >"$STATE/containerd/config.toml" <<EOF
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
[grpc]
  address = "$(sock)"
[ttrpc]
  address = "$(sock).ttrpc"
[debug]
  address = "$(sock).debug"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  netns_mounts_under_state_dir = true
  # Clamp the negative oom_score_adj of sandboxes and Guaranteed pods (-998, -997) to containerd's
  # own: lowering it needs CAP_SYS_RESOURCE, which some machines (VMs, containers) do not grant
  # even to root, and runc then fails with "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = $restrict_oom
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
EOF
  cat >"$STATE/cni/net.d/10-bloom-local.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "bloom-local",
  "plugins": [
    {
      "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}],
               "dataDir": "$STATE/cni/ipam"}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  cat >"$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$STATE/pki/ca.crt"}
authorization: {mode: Webhook}
containerRuntimeEndpoint: "unix://$(sock)"
# cgroupfs: there is no systemd to delegate to. Kubernetes 1.35 refuses cgroup v1 unless told.
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
port: $KUBELET_PORT
healthzPort: $KUBELET_HEALTHZ_PORT
readOnlyPort: 0
podLogsDir: "$STATE/pod-logs"
# No cluster DNS: in-cluster clients find the API server through KUBERNETES_SERVICE_HOST.
resolvConf: /etc/resolv.conf
serializeImagePulls: false
EOF
  cat >"$STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$STATE/kubeconfig"}
mode: iptables
clusterCIDR: "$POD_CIDR"
hostnameOverride: "$node"
metricsBindAddress: "127.0.0.1:$PROXY_METRICS_PORT"
healthzBindAddress: "127.0.0.1:$PROXY_HEALTHZ_PORT"
# Leave the machine's conntrack and route_localnet settings alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
EOF
}

# --- commands -----------------------------------------------------------------------------------
start() {
  check_host
  build
  mkdir -p "$STATE"/{pids,logs,containerd,cni/net.d,cni/ipam,kubelet,pod-logs,etcd}
  local ip node
  ip=$(node_ip)
  [ -n "$ip" ] || die "no IPv4 address with a route found for the node"
  node=$(hostname | tr '[:upper:]' '[:lower:]')
  certs "$ip" "$node"
  write_configs "$ip" "$node"
  if [ ! -f "$STATE/sysctls.before" ]; then
    for s in $SYSCTLS; do echo "$s=$(sysctl -n "$s")"; done >"$STATE/sysctls.before"
  fi

  launch etcd "$SERVER_BIN/etcd" --name local --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT"
  local pki="$STATE/pki"
  launch kube-apiserver "$SERVER_BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 0.0.0.0 --secure-port "$API_PORT" --advertise-address "$ip" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --service-cluster-ip-range "$SERVICE_CIDR" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --authorization-mode Node,RBAC --allow-privileged=true \
    --kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key"
  wait_for 60 kube-apiserver kubectl_ get --raw /readyz
  launch kube-controller-manager "$SERVER_BIN/kube-controller-manager" --kubeconfig "$STATE/kubeconfig" \
    --authentication-kubeconfig "$STATE/kubeconfig" --authorization-kubeconfig "$STATE/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$CM_PORT" --leader-elect=false \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR"
  launch kube-scheduler "$NODE_BIN/kube-scheduler" --kubeconfig "$STATE/kubeconfig" \
    --authentication-kubeconfig "$STATE/kubeconfig" --authorization-kubeconfig "$STATE/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false

  launch containerd containerd --config "$STATE/containerd/config.toml"
  wait_for 30 containerd ctr_ version
  if ! ctr_ images ls -q | grep -qx "$PAUSE_IMAGE"; then
    pause_image "$STATE/pause.tar"
    ctr_ images import "$STATE/pause.tar" >/dev/null
  fi
  launch kubelet "$NODE_BIN/kubelet" --config "$STATE/kubelet.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
    --root-dir "$STATE/kubelet" --hostname-override "$node" --node-ip "$ip"
  launch kube-proxy "$NODE_BIN/kube-proxy" --config "$STATE/kube-proxy.yaml"
  wait_for 120 "node $node" kubectl_ wait --for=condition=Ready "node/$node" --timeout=1s
  log "ready: node $node"
  log "to use it:"
  echo "export KUBECONFIG=$STATE/kubeconfig"
  echo "export PATH=\"$NODE_BIN:\$PATH\"   # kubectl ${KUBE_VERSION}, crictl"
  log "images for pods: bash hack/local-cluster.sh load <image.tar>"
}

load() {
  [ -n "${1:-}" ] || die "usage: local-cluster.sh load IMAGE.tar"
  running containerd || die "not started: bash hack/local-cluster.sh start"
  ctr_ images import "$1"
}

stop() {
  [ -d "$STATE" ] || { log "nothing to stop ($STATE does not exist)"; return; }
  # kubelet first, so that it does not restart what is removed next; then every pod sandbox
  # through containerd's CRI, which stops the containers and runs the CNI teardown (veth, IP).
  halt kubelet
  if running containerd && [ -x "$NODE_BIN/crictl" ]; then
    crictl_ rmp --all --force >/dev/null 2>&1 || log "crictl rmp failed; see containerd's log"
  fi
  halt containerd
  halt kube-proxy
  if [ -x "$NODE_BIN/kube-proxy" ]; then
    "$NODE_BIN/kube-proxy" --cleanup --config "$STATE/kube-proxy.yaml" >>"$STATE/logs/kube-proxy.log" 2>&1 || true
  fi
  kubelet_chains_cleanup
  halt kube-scheduler
  halt kube-controller-manager
  halt kube-apiserver
  halt etcd
  # Mounts left under the state directory (kubelet's volumes, a sandbox's network namespace),
  # deepest first.
  { findmnt -rn -o TARGET | grep "^$STATE/" || true; } | sort -r | while read -r m; do umount -l "$m" || true; done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link delete "$BRIDGE"; fi
  if [ -f "$STATE/sysctls.before" ]; then
    while IFS= read -r kv; do sysctl -qw "$kv" || true; done <"$STATE/sysctls.before"
    rm -f "$STATE/sysctls.before"
  fi
  log "stopped; the cluster's data stays in $STATE (start again with: bash hack/local-cluster.sh start)"
}

kubelet_chains_cleanup() { # the chains kubelet adds (kube-proxy --cleanup removes its own)
  local cmd table chain
  for cmd in iptables ip6tables; do
    command -v "$cmd" >/dev/null || continue
    for table in filter nat mangle; do
      for chain in KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT; do
        "$cmd" -t "$table" -S "$chain" >/dev/null 2>&1 || continue
        while "$cmd" -t "$table" -D INPUT -j "$chain" 2>/dev/null; do :; done
        while "$cmd" -t "$table" -D OUTPUT -j "$chain" 2>/dev/null; do :; done
        "$cmd" -t "$table" -F "$chain" && "$cmd" -t "$table" -X "$chain" || true
      done
    done
  done
}

status() {
  local n
  for n in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy; do
    if running "$n"; then echo "$n: running (pid $(cat "$STATE/pids/$n.pid"))"; else echo "$n: stopped"; fi
  done
  if running kube-apiserver; then kubectl_ get nodes -o wide; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  delete) stop; rm -rf "$STATE"; log "deleted $STATE" ;;
  status) status ;;
  load) load "${2:-}" ;;
  build) build ;;
  *) sed -n '/^# Usage/,/^# Then/p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
