#!/usr/bin/env bash
# Builds archiver_<version>_<arch>.deb in the current directory from the release binary given:
# /usr/bin/archiver, the man page archiver(1) and the bash, zsh and fish completions, all three
# written by the binary itself from the option table its parser reads. Depends comes from
# dpkg-shlibdeps, i.e. from the libraries the binary links (the Swift runtime is inside it).
set -euo pipefail
bin=${1:?usage: scripts/make-deb.sh path/to/archiver}
stage=${DEB_STAGE:-.build/deb}
version=$("$bin" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
deb=archiver_${version}_${arch}.deb
root=$stage/root

# dpkg-shlibdeps is in dpkg-dev (not in the Swift images); installed like `make deps` does.
if ! command -v dpkg-shlibdeps >/dev/null; then
    echo "installing: dpkg-dev"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq dpkg-dev >/dev/null
fi

rm -rf "$stage"
mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/bash-completion/completions" \
    "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d" "$root/usr/share/doc/archiver"
# Debug info only: the symbol table stays, so a crash's backtrace still names functions.
strip --strip-debug -o "$root/usr/bin/archiver" "$bin"
chmod 755 "$root/usr/bin/archiver"
"$bin" man | gzip -9n >"$root/usr/share/man/man1/archiver.1.gz"
"$bin" completions bash >"$root/usr/share/bash-completion/completions/archiver"
"$bin" completions zsh >"$root/usr/share/zsh/vendor-completions/_archiver"
"$bin" completions fish >"$root/usr/share/fish/vendor_completions.d/archiver.fish"
commit=$("$bin" --version | sed -n 's/.*(commit \(.*\))$/\1/p')
printf 'archiver %s, built from commit %s of the archiver sources.\n' "$version" "$commit" \
    >"$root/usr/share/doc/archiver/README.Debian"
find "$root/usr" -type f ! -path "$root/usr/bin/*" -exec chmod 644 {} +
find "$root" -type d -exec chmod 755 {} +

# dpkg-shlibdeps reads a source package's debian/control in the directory it runs in.
mkdir -p "$stage/debian"
cat >"$stage/debian/control" <<CONTROL
Source: archiver
Maintainer: ${DEB_MAINTAINER:-archiver maintainers <archiver@example.com>}

Package: archiver
Architecture: any
CONTROL
depends=$(cd "$stage" && dpkg-shlibdeps -O root/usr/bin/archiver 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "make-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

cat >"$root/DEBIAN/control" <<CONTROL
Package: archiver
Version: $version
Architecture: $arch
Maintainer: ${DEB_MAINTAINER:-archiver maintainers <archiver@example.com>}
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Recommends: ca-certificates
Section: utils
Priority: optional
Description: archive a catalog of image URLs into a verified offline bundle
 archiver turns a catalog of image records (JSON, JSON Lines, CSV or TSV) into
 an offline bundle: one checked image file per record, a reproducible manifest
 of what was fetched from where with which checksum, and a paged gallery.
 Interrupted runs resume; finished work is never redone.
CONTROL
(cd "$root" && find usr -type f -exec md5sum {} + | sort -k2) >"$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
# zstd -9: 22 MB in about 2 s of CPU; dpkg-deb's default xz gives 16 MB for 50 s, which every CI
# run would pay on shared cores (DEB_COMPRESS=-Zxz for it). dpkg reads zstd since Debian 12.
dpkg-deb ${DEB_COMPRESS:--Zzstd -z9} --root-owner-group --build "$root" "$deb" >/dev/null
echo "$deb: $(du -h "$deb" | cut -f1), Depends: $depends"
