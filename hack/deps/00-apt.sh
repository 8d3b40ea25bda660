#!/usr/bin/env bash
# Debian packages: listed once here, installed only when missing.
set -euo pipefail
# runc, crun (a second runtime for a cgroup v2 host), CNI plugins, iproute2 (ip netns) and docker-registry run the real node
# (e2e/framework/node.go; its containerd 2.x is built by 26-containerd2.sh). Debian's containerd 1.6 is no longer used.
# chromium drives the browser test of kubecause's pages (e2e/browser_test.go); the font draws the
# Chinese runbooks in its screenshots.
pkgs=(prometheus prometheus-alertmanager etcd-server runc crun containernetworking-plugins iproute2 docker-registry apache2-utils chromium fonts-wqy-microhei)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing Debian packages: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The packages start services of their own; the tests start their own instances.
for s in prometheus prometheus-alertmanager etcd prometheus-node-exporter containerd docker-registry; do
	$SUDO systemctl disable --now "$s" >/dev/null 2>&1 || $SUDO service "$s" stop >/dev/null 2>&1 || true
done
