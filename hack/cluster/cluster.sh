#!/usr/bin/env bash
# A real one-node Kubernetes v1.37.2 on this machine, for `make e2e-cluster`:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd
# with runc and the bridge CNI plugin, kubelet, kube-proxy (nftables) and
# CoreDNS, all as host processes except CoreDNS, which runs as a pod.
#
#   hack/cluster/cluster.sh up      start it (binaries from hack/cluster/install.sh)
#   hack/cluster/cluster.sh down    stop it and restore the host; safe to run twice,
#                                   after a failed `up` and after a crash
#   hack/cluster/cluster.sh env     print KUBECONFIG=... for a shell
#   hack/cluster/cluster.sh apiserver-stop|apiserver-start
#                                   a control-plane outage (test/cluster's faults)
#
# What it changes on the host, and `down` restores (docs/e2e-cluster.md):
#   - the bridge llmk0 (10.244.0.1/24, pods), a route for the service CIDR
#     10.96.0.0/16 to it, and the pods' network namespaces;
#   - the nftables ruleset (kube-proxy's tables and a guard table that drops
#     anything a pod sends out of the bridge): saved before, restored after;
#   - sysctls kubelet and the bridge plugin set (saved and restored);
#   - the kubelet's cgroups (kubepods in every v1 hierarchy);
#   - /var/log/pods and /var/log/containers (removed unless they existed);
#   - everything else lives in /var/lib/llmkube-e2e and /run/llmkube-e2e.
# Nothing listens on the machine's outward interface: the API server, the
# kubelet and NodePorts bind to the bridge address or loopback.
set -euo pipefail

K8S_VERSION=v1.37.2
TOOLS_DIR="${TOOLS_DIR:-${HOME}/.cache/llmkube-compile}"
ENVTEST_ASSETS="${ENVTEST_ASSETS:-${TOOLS_DIR}/envtest-bin}"
CLUSTER_TOOLS="${CLUSTER_TOOLS:-${TOOLS_DIR}/cluster-${K8S_VERSION}}"
BIN="${CLUSTER_TOOLS}/bin"
IMAGES="${CLUSTER_TOOLS}/images"

STATE=/var/lib/llmkube-e2e   # data: etcd, PKI, containerd's images, kubelet's root
RUN=/run/llmkube-e2e         # sockets, pids, logs, the saved host state
HOST_SAVE="${RUN}/host"
LOGS="${RUN}/logs"
PKI="${STATE}/pki"
KCFG="${STATE}/kubeconfig"

NODE=llmkube-e2e
BRIDGE=llmk0
NODE_IP=10.244.0.1
POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
DNS_IP=10.96.0.10
ETCD_PORT=2479
CONTAINERD_SOCK="${RUN}/containerd.sock"

# The sysctls kubelet (protectKernelDefaults: false), the bridge plugin and
# kube-proxy may write; each is saved before `up` and written back by `down`.
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
  kernel.keys.root_maxbytes net.ipv4.ip_forward net.ipv4.conf.all.route_localnet
  net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
  net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established
  net.netfilter.nf_conntrack_tcp_timeout_close_wait net.netfilter.nf_conntrack_tcp_be_liberal)
# Paths a kubelet writes outside its root directory.
HOST_PATHS=(/var/log/pods /var/log/containers /var/lib/cni)

log() { printf '[cluster %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root: it runs a kubelet and changes the host's network"
export PATH="${BIN}:${ENVTEST_ASSETS}:${PATH}"

# ------------------------------------------------------------------ processes
start() { # NAME CMD...: start a host process with its log and pid in RUN
  local name=$1; shift
  log "starting ${name}"
  setsid "$@" >>"${LOGS}/${name}.log" 2>&1 </dev/null &
  echo $! >"${RUN}/${name}.pid"
}
stop() { # NAME: SIGTERM, then SIGKILL after 15 s
  local name=$1 pidf="${RUN}/${1}.pid" pid
  [[ -f $pidf ]] || return 0
  pid=$(cat "$pidf")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidf"
}
alive() { [[ -f "${RUN}/${1}.pid" ]] && kill -0 "$(cat "${RUN}/${1}.pid")" 2>/dev/null; }
wait_for() { # NAME SECONDS CMD...: until CMD succeeds; the process NAME must stay alive
  local name=$1 secs=$2; shift 2
  for _ in $(seq $((secs * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    alive "$name" || { tail -n 30 "${LOGS}/${name}.log" >&2 || true; die "${name} exited"; }
    sleep 0.2
  done
  tail -n 30 "${LOGS}/${name}.log" >&2 || true
  die "${name} not ready after ${secs}s"
}
kubectl_() { kubectl --kubeconfig "${KCFG}/admin.conf" "$@"; }

# ------------------------------------------------------------------ host state
save_host() {
  mkdir -p "$HOST_SAVE"
  local s
  for s in "${SYSCTLS[@]}"; do
    if v=$(sysctl -n "$s" 2>/dev/null); then printf '%s=%s\n' "$s" "$v"; fi
  done >"${HOST_SAVE}/sysctl"
  nft list ruleset >"${HOST_SAVE}/nft.rules"
  for s in "${HOST_PATHS[@]}"; do [[ -e $s ]] && echo "$s"; done >"${HOST_SAVE}/paths"
  touch "${HOST_SAVE}/saved"
}

restore_host() {
  [[ -f "${HOST_SAVE}/saved" ]] || return 0
  log "restoring the nftables ruleset, sysctls and host paths"
  nft flush ruleset || true
  if [[ -s "${HOST_SAVE}/nft.rules" ]]; then nft -f "${HOST_SAVE}/nft.rules" || log "WARNING: nft ruleset not restored"; fi
  local line p
  while IFS= read -r line; do
    sysctl -q -w "$line" >/dev/null 2>&1 || log "WARNING: sysctl ${line} not restored"
  done <"${HOST_SAVE}/sysctl"
  for p in "${HOST_PATHS[@]}"; do
    grep -qxF "$p" "${HOST_SAVE}/paths" || rm -rf "$p"
  done
}

# ------------------------------------------------------------------ network
network_up() {
  ip link add "$BRIDGE" type bridge
  ip addr add "${NODE_IP}/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  ip route add "$SERVICE_CIDR" dev "$BRIDGE" src "$NODE_IP"
  # The guard: nothing a pod sends is forwarded out of the bridge, and
  # nothing from outside is forwarded into it. Pods also have no default
  # route (host-local IPAM below gives them only the service CIDR).
  nft -f - <<EOF
table inet llmkube-e2e-guard {
  chain forward {
    type filter hook forward priority -10; policy accept;
    iifname "${BRIDGE}" oifname != "${BRIDGE}" drop
    oifname "${BRIDGE}" iifname != "${BRIDGE}" drop
  }
}
EOF
}

network_down() {
  local ns l
  # Sandboxes that containerd did not tear down (a crash): their netns.
  if [[ -d /run/netns ]]; then
    for ns in /run/netns/cni-*; do
      [[ -e $ns ]] || continue
      umount "$ns" 2>/dev/null || true
      rm -f "$ns"
    done
  fi
  for l in $(ip -o link show master "$BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$l" 2>/dev/null || true
  done
  ip route del "$SERVICE_CIDR" dev "$BRIDGE" 2>/dev/null || true
  ip link del "$BRIDGE" 2>/dev/null || true
}

# ------------------------------------------------------------------ PKI
pki() {
  mkdir -p "$PKI" "$KCFG"
  cat >"${STATE}/kubeadm.yaml" <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: ${NODE_IP}
  bindPort: 6443
nodeRegistration:
  name: ${NODE}
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: ${K8S_VERSION}
clusterName: llmkube-e2e
certificatesDir: ${PKI}
controlPlaneEndpoint: ${NODE_IP}:6443
networking:
  serviceSubnet: ${SERVICE_CIDR}
  podSubnet: ${POD_CIDR}
  dnsDomain: cluster.local
apiServer:
  certSANs: [127.0.0.1, ${NODE_IP}, ${NODE}]
EOF
  kubeadm init phase certs all --config "${STATE}/kubeadm.yaml" >"${LOGS}/kubeadm.log" 2>&1 ||
    { cat "${LOGS}/kubeadm.log" >&2; die "kubeadm init phase certs failed"; }
  kubeadm init phase kubeconfig all --config "${STATE}/kubeadm.yaml" --kubeconfig-dir "$KCFG" >>"${LOGS}/kubeadm.log" 2>&1 ||
    { cat "${LOGS}/kubeadm.log" >&2; die "kubeadm init phase kubeconfig failed"; }
  # kube-proxy's identity: the bootstrap policy binds system:node-proxier to it.
  kubeadm kubeconfig user --config "${STATE}/kubeadm.yaml" --client-name system:kube-proxy \
    >"${KCFG}/kube-proxy.conf" 2>>"${LOGS}/kubeadm.log" || die "kubeadm kubeconfig user failed"
}

# ------------------------------------------------------------------ control plane
# apiserver_up starts kube-apiserver on the cluster's etcd and waits for it;
# also `cluster.sh apiserver-start` after `apiserver-stop` (the fault
# scenarios of test/cluster stop it under load).
apiserver_up() {
  start kube-apiserver kube-apiserver \
    --bind-address="$NODE_IP" --advertise-address="$NODE_IP" --secure-port=6443 \
    --etcd-servers="http://127.0.0.1:${ETCD_PORT}" \
    --service-cluster-ip-range="$SERVICE_CIDR" --service-node-port-range=30000-32767 \
    --client-ca-file="${PKI}/ca.crt" \
    --tls-cert-file="${PKI}/apiserver.crt" --tls-private-key-file="${PKI}/apiserver.key" \
    --kubelet-client-certificate="${PKI}/apiserver-kubelet-client.crt" \
    --kubelet-client-key="${PKI}/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="${PKI}/sa.pub" --service-account-signing-key-file="${PKI}/sa.key" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --proxy-client-cert-file="${PKI}/front-proxy-client.crt" --proxy-client-key-file="${PKI}/front-proxy-client.key" \
    --requestheader-client-ca-file="${PKI}/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
    --requestheader-extra-headers-prefix=X-Remote-Extra- --requestheader-group-headers=X-Remote-Group \
    --requestheader-username-headers=X-Remote-User \
    --allow-privileged=false --profiling=false
  wait_for kube-apiserver 90 kubectl --kubeconfig "${KCFG}/super-admin.conf" get --raw /readyz
}

control_plane() {
  start etcd etcd --name llmkube-e2e --data-dir "${STATE}/etcd" \
    --listen-client-urls "http://127.0.0.1:${ETCD_PORT}" --advertise-client-urls "http://127.0.0.1:${ETCD_PORT}" \
    --listen-peer-urls http://127.0.0.1:2480 --initial-advertise-peer-urls http://127.0.0.1:2480 \
    --initial-cluster llmkube-e2e=http://127.0.0.1:2480 --unsafe-no-fsync
  wait_for etcd 30 etcdctl_health

  apiserver_up
  # admin.conf's user is in kubeadm:cluster-admins, which kubeadm binds to
  # cluster-admin as its last step; super-admin.conf (system:masters) is
  # used for this once, as kubeadm does.
  kubectl --kubeconfig "${KCFG}/super-admin.conf" create clusterrolebinding kubeadm:cluster-admins \
    --clusterrole=cluster-admin --group=kubeadm:cluster-admins >>"${LOGS}/apply.log"
  # The API server's client certificate for kubelets (logs, exec), bound as kubeadm binds it.
  kubectl --kubeconfig "${KCFG}/super-admin.conf" create clusterrolebinding kubeadm:apiserver-kubelet-client \
    --clusterrole=system:kubelet-api-admin --user=kube-apiserver-kubelet-client >>"${LOGS}/apply.log"

  start kube-controller-manager kube-controller-manager \
    --kubeconfig="${KCFG}/controller-manager.conf" \
    --authentication-kubeconfig="${KCFG}/controller-manager.conf" \
    --authorization-kubeconfig="${KCFG}/controller-manager.conf" \
    --bind-address=127.0.0.1 --secure-port=10257 \
    --cluster-name=llmkube-e2e --cluster-signing-cert-file="${PKI}/ca.crt" --cluster-signing-key-file="${PKI}/ca.key" \
    --root-ca-file="${PKI}/ca.crt" --service-account-private-key-file="${PKI}/sa.key" \
    --use-service-account-credentials=true --leader-elect=false \
    --service-cluster-ip-range="$SERVICE_CIDR" --allocate-node-cidrs=false --controllers='*,bootstrapsigner,tokencleaner'
  start kube-scheduler kube-scheduler \
    --kubeconfig="${KCFG}/scheduler.conf" \
    --authentication-kubeconfig="${KCFG}/scheduler.conf" --authorization-kubeconfig="${KCFG}/scheduler.conf" \
    --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false
}
etcdctl_health() { curl -fsS "http://127.0.0.1:${ETCD_PORT}/health" | grep -q '"health":"true"'; }

# ------------------------------------------------------------------ node
containerd_up() {
  mkdir -p "${STATE}/containerd" "${RUN}/containerd" "${STATE}/cni/net.d" "${STATE}/cni/ipam"
  # shellcheck disable=SC1091
  source "${IMAGES}/refs.env"
  cat >"${STATE}/containerd.toml" <<EOF
version = 2
root = "${STATE}/containerd"
state = "${RUN}/containerd"
[grpc]
  address = "${CONTAINERD_SOCK}"
[ttrpc]
  address = "${CONTAINERD_SOCK}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "${STATE}/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # root here lacks CAP_SYS_RESOURCE: without this every sandbox fails with
  # runc's "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${STATE}/cni/net.d"
EOF
  cat >"${STATE}/cni/net.d/10-llmkube-e2e.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "llmkube-e2e",
  "plugins": [{
    "type": "bridge",
    "bridge": "${BRIDGE}",
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "dataDir": "${STATE}/cni/ipam",
      "ranges": [[{"subnet": "${POD_CIDR}", "rangeStart": "10.244.0.10", "gateway": "${NODE_IP}"}]],
      "routes": [{"dst": "${SERVICE_CIDR}"}]
    }
  }]
}
EOF
  start containerd containerd --config "${STATE}/containerd.toml"
  wait_for containerd 30 ctr --address "$CONTAINERD_SOCK" version
  local tar
  for tar in "${IMAGES}"/*.tar "${PROJECT_IMAGES:-}"/*.tar; do
    [[ -f $tar ]] || continue
    log "importing $(basename "$tar")"
    ctr --address "$CONTAINERD_SOCK" -n k8s.io images import "$tar" >>"${LOGS}/images.log" 2>&1 ||
      { cat "${LOGS}/images.log" >&2; die "ctr images import ${tar} failed"; }
  done
}

kubelet_up() {
  mkdir -p "${STATE}/kubelet"
  : >"${STATE}/resolv.conf" # pods resolve through the cluster DNS only
  cat >"${STATE}/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${NODE_IP}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${PKI}/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://${CONTAINERD_SOCK}
# This machine has cgroup v1: 1.37 still runs there when told to.
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
clusterDNS: [${DNS_IP}]
clusterDomain: cluster.local
resolvConf: ${STATE}/resolv.conf
protectKernelDefaults: false
maxPods: 40
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
serializeImagePulls: false
shutdownGracePeriod: 0s
EOF
  start kubelet kubelet --config="${STATE}/kubelet.yaml" --kubeconfig="${KCFG}/kubelet.conf" \
    --root-dir="${STATE}/kubelet" --cert-dir="${STATE}/kubelet/pki" \
    --hostname-override="$NODE" --node-ip="$NODE_IP" --v=1
  wait_for kubelet 120 node_ready
}
node_ready() { kubectl_ get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx True; }

kube_proxy_up() {
  cat >"${STATE}/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: ${KCFG}/kube-proxy.conf}
mode: nftables
hostnameOverride: ${NODE}
bindAddress: ${NODE_IP}
clusterCIDR: ${POD_CIDR}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [${NODE_IP}/32]
# Leave the host's conntrack table size and timeouts as they are.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start kube-proxy kube-proxy --config="${STATE}/kube-proxy.yaml"
  wait_for kube-proxy 60 curl -fsS http://127.0.0.1:10256/healthz
}

dns_up() {
  # shellcheck disable=SC1091
  source "${IMAGES}/refs.env"
  sed -e "s#@COREDNS_IMAGE@#${COREDNS_IMAGE}#g" -e "s#@DNS_IP@#${DNS_IP}#g" \
    "$(dirname "${BASH_SOURCE[0]}")/coredns.yaml" | kubectl_ apply --server-side -f - >>"${LOGS}/apply.log"
  local i
  for i in $(seq 60); do
    kubectl_ -n kube-system rollout status deploy/coredns --timeout=2s >/dev/null 2>&1 && return 0
    sleep 1
  done
  kubectl_ -n kube-system get pods -o wide >&2 || true
  kubectl_ -n kube-system describe pods -l k8s-app=kube-dns >&2 || true
  die "CoreDNS not ready"
}

# ------------------------------------------------------------------ teardown
runtime_down() {
  if alive containerd; then
    log "removing every pod sandbox (CNI DEL for each)"
    timeout 120 crictl --runtime-endpoint "unix://${CONTAINERD_SOCK}" rmp -af >/dev/null 2>&1 || true
  fi
  stop containerd
  # Shims outlive containerd by design; ours name our socket.
  pkill -KILL -f -- "-address ${CONTAINERD_SOCK}" 2>/dev/null || true
  # A container left behind (a crash): kill what is still in the kubelet's cgroups, then remove them.
  local h d
  for h in /sys/fs/cgroup/*/; do
    [[ -d "${h}kubepods" ]] || continue
    find "${h}kubepods" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
  done
  sleep 0.5
  for h in /sys/fs/cgroup/*/; do
    [[ -d "${h}kubepods" ]] || continue
    find "${h}kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    [[ -d "${h}kubepods" ]] && log "WARNING: ${h}kubepods not removed"
  done
  # Mounts under our directories (overlay rootfs, kubelet volumes, shm), deepest first.
  for d in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^(${STATE}|${RUN})/" | sort -r); do
    umount -l "$d" 2>/dev/null || true
  done
}

down() {
  log "tearing down"
  stop kubelet
  runtime_down
  local p
  for p in kube-proxy kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$p"; done
  network_down
  restore_host
  # Logs survive one teardown, for the run that failed (e2e.sh prints them).
  if [[ -d $LOGS ]]; then rm -rf /tmp/llmkube-e2e-logs && cp -r "$LOGS" /tmp/llmkube-e2e-logs; fi
  rm -rf "$STATE" "$RUN"
  log "down: host restored"
}

up() {
  [[ -x "${BIN}/kubelet" && -f "${IMAGES}/refs.env" ]] || die "cluster binaries missing: run hack/cluster/install.sh first"
  [[ -x "${ENVTEST_ASSETS}/kube-apiserver" ]] || die "kube-apiserver missing: run make envtest first"
  if [[ -e $RUN || -e $STATE ]]; then
    log "a previous cluster is still here: tearing it down first"
    down
  fi
  mkdir -p "$STATE" "$RUN" "$LOGS"
  save_host
  network_up
  pki
  control_plane
  containerd_up
  kubelet_up
  kube_proxy_up
  dns_up
  log "up: KUBECONFIG=${KCFG}/admin.conf"
}

# hoststate prints what `up` may change on the host, for e2e.sh to compare
# before `up` and after `down`.
hoststate() {
  local s p h
  for s in "${SYSCTLS[@]}"; do printf 'sysctl %s=%s\n' "$s" "$(sysctl -n "$s" 2>/dev/null || echo absent)"; done
  nft list ruleset | sed 's/^/nft /'
  ip -o link show | awk -F': ' '{print "link " $2}' | cut -d@ -f1 | sort
  ip route show table main | sed 's/^/route /'
  for p in "${HOST_PATHS[@]}" "$STATE" "$RUN"; do [[ -e $p ]] && echo "path $p"; done
  for h in /sys/fs/cgroup/*/; do [[ -d "${h}kubepods" ]] && echo "cgroup ${h}kubepods"; done
  awk '{print $5}' /proc/self/mountinfo | grep -E "^(${STATE}|${RUN}|/run/netns/cni-)" | sed 's/^/mount /' || true
  pgrep -a -f -- "${CONTAINERD_SOCK}|${STATE}" | sed 's/^[0-9]* /process /' || true
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  env) echo "KUBECONFIG=${KCFG}/admin.conf" ;;
  hoststate) hoststate ;;
  # A control-plane outage for test/cluster's fault scenarios: the API
  # server stopped (SIGTERM, as a crash or an upgrade takes it away) and
  # started again with the same flags, etcd and certificates.
  apiserver-stop) stop kube-apiserver ;;
  apiserver-start) apiserver_up ;;
  *) die "usage: $0 up|down|env|hoststate|apiserver-stop|apiserver-start" ;;
esac
