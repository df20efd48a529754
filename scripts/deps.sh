#!/bin/sh
# deps.sh -- install the Debian packages jemattach needs to build, test and demo.
# As root, missing packages are installed; otherwise the exact command is printed.
set -e
PKGS="gcc make pkg-config binutils libelf-dev libdw-dev libunwind-dev check libjemalloc-dev
libjemalloc2 redis-server redis-tools jq gdb strace elfutils util-linux procps protobuf-c-compiler
libprotobuf-c-dev protobuf-compiler zlib1g-dev libbz2-dev libjansson-dev libxml2-utils libunicorn-dev
autoconf xz-utils bzip2 hyperfine curl g++
libmicrohttpd-dev libyaml-dev libgnutls28-dev libcrypt-dev prometheus golang-go apache2-utils openssl
python3 python3-yaml lintian dpkg-dev systemd clang llvm libbpf-dev bpftool fuse3 libfuse3-dev"
missing=""
for p in $PKGS; do
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$s" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "jemattach: missing Debian packages; run as root:" >&2
	echo "  apt-get install -y$missing" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The redis-server package tries to start its service; there may be no init to ask.
apt-get install -y -qq --no-install-recommends $missing
