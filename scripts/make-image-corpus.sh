#!/bin/sh
# Writes the image-validation corpus into Tests/ArchiverCoreTests/Fixtures/images/ (committed;
# rerun to regenerate) with the reference encoders: ImageMagick (convert), libjpeg-turbo-progs
# (cjpeg, jpegtran), webp (cwebp, img2webp). Damaged files and bombs are patched from good ones
# in Python. Every file's expected verdict in both modes goes to expected.tsv, which
# ImageFormatValidatorTests reads. The tools are deterministic for these inputs (no dates are
# written), so a rerun gives the same bytes.
set -eu
cd "$(dirname "$0")/.."
for tool in convert cjpeg jpegtran cwebp img2webp python3; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install imagemagick libjpeg-turbo-progs webp)" >&2; exit 1; }
done
out=Tests/ArchiverCoreTests/Fixtures/images
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -f "$out"/*
mkdir -p "$out"

# Sources: a 64x48 colour gradient (PPM for cjpeg, PNG for cwebp), frames, an alpha gradient.
convert -size 64x48 gradient:red-blue "$work/g.ppm"
convert -size 64x48 gradient:red-blue -strip "$work/g.png"
convert -size 64x48 gradient:'rgba(255,0,0,1)-rgba(0,0,255,0)' -strip "$work/alpha.png"
for c in red green blue; do convert -size 32x24 xc:$c -strip "$work/$c.png"; done
convert -size 1024x768 gradient:yellow-navy "$work/large.ppm"

cjpeg -quality 80 "$work/g.ppm" >"$out/jpeg-baseline.jpg"
cjpeg -quality 80 -progressive "$work/g.ppm" >"$out/jpeg-progressive.jpg"
cjpeg -quality 80 -grayscale "$work/g.ppm" >"$out/jpeg-grayscale.jpg"
cjpeg -quality 80 -arithmetic "$work/g.ppm" >"$out/jpeg-arithmetic.jpg"
cjpeg -quality 80 -restart 1 "$work/g.ppm" >"$out/jpeg-restart.jpg"
convert "$work/g.ppm" -colorspace CMYK -quality 80 -strip "$out/jpeg-cmyk.jpg"
cjpeg -quality 60 -progressive "$work/large.ppm" >"$out/jpeg-large-progressive.jpg"
# The most scans CJPEG allows (100, jpegtran's own script limit too): one DC scan, then every
# component's AC coefficients in 33 bands of its own.
python3 - "$work/scans.txt" <<'PY'
import sys
bands = [(1, 1), (2, 2), (3, 3)] + [(k, k + 1) for k in range(4, 64, 2)]
lines = ["0,1,2: 0-0, 0, 0;"] + ["%d: %d-%d, 0, 0;" % (c, a, b) for c in range(3) for a, b in bands]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
jpegtran -scans "$work/scans.txt" "$out/jpeg-baseline.jpg" >"$out/jpeg-progressive-100-scans.jpg"
# 6144x6144 progressive, arithmetic-coded, one grey: about 200 bytes, whose coefficient buffer
# (72 MiB) is over full mode's 64 MiB.
python3 -c "import sys; sys.stdout.buffer.write(b'P5\n6144 6144\n255\n' + bytes([128]) * 6144 * 6144)" >"$work/grey.pgm"
cjpeg -grayscale -progressive -arithmetic "$work/grey.pgm" >"$out/jpeg-bomb-memory-6144.jpg"

cwebp -quiet -q 75 "$work/g.png" -o "$out/webp-lossy.webp"
cwebp -quiet -lossless "$work/g.png" -o "$out/webp-lossless.webp"
cwebp -quiet -q 75 "$work/alpha.png" -o "$out/webp-alpha.webp"
img2webp -loop 0 -d 100 "$work/red.png" "$work/green.png" -lossy "$work/blue.png" -o "$out/webp-animated.webp" >/dev/null 2>&1
cwebp -quiet -lossless "$work/large.ppm" -o "$out/webp-large-lossless.webp"
python3 -c "import sys; sys.stdout.buffer.write(b'P6\n4500 4500\n255\n' + bytes([128, 10, 10]) * 4500 * 4500)" >"$work/flat.ppm"
cwebp -quiet -lossless "$work/flat.ppm" -o "$out/webp-bomb-memory-4500.webp"

convert -size 64x48 gradient:red-blue "$out/gif-static.gif"
convert -delay 10 -loop 0 "$work/red.png" "$work/green.png" "$work/blue.png" "$out/gif-animated.gif"
convert -size 64x48 gradient:red-blue -interlace GIF "$out/gif-interlaced.gif"
convert -size 64x48 gradient:red-blue "GIF87:$out/gif-87a.gif"
convert -size 4096x4096 xc:red "$out/gif-large-4096.gif"

python3 - "$out" "$work" <<'PY'
import os, struct, sys, zlib
out, work = sys.argv[1], sys.argv[2]

def read(name):
    return open(os.path.join(out, name), "rb").read()

def write(name, data):
    open(os.path.join(out, name), "wb").write(data)

def segments(jpeg):
    """(marker, offset, length) of every segment before the first scan's data."""
    pos, found = 2, []
    while True:
        marker, length = jpeg[pos + 1], struct.unpack(">H", jpeg[pos + 2:pos + 4])[0]
        found.append((marker, pos, length))
        if marker == 0xDA:
            return found
        pos += 2 + length

base = read("jpeg-baseline.jpg")
# Exif orientation 6 (rotate 90) in an APP1 segment right after SOI.
tiff = b"MM\0*" + struct.pack(">I", 8) + struct.pack(">H", 1) + struct.pack(">HHII", 0x0112, 3, 1, 6 << 16) + struct.pack(">I", 0)
app1 = b"Exif\0\0" + tiff
write("jpeg-exif-orientation.jpg", base[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + base[2:])
write("jpeg-appended-image.jpg", base + read("jpeg-grayscale.jpg"))
write("jpeg-trailing-padding.jpg", base + b"\0" * 16)
write("jpeg-trailing-junk.jpg", base + b"<html>oops</html>")
write("jpeg-truncated.jpg", base[: len(base) // 2])
write("jpeg-no-eoi.jpg", base[:-2])
write("jpeg-header-alone.jpg", base[: segments(base)[0][1] + 2 + segments(base)[0][2]])
# The first segment's length made to run past the end of the file.
marker, offset, length = segments(base)[0]
write("jpeg-segment-past-end.jpg", base[: offset + 2] + struct.pack(">H", 0xFFF0) + base[offset + 4:])
# A sound container whose scan is cut in half: only decoding sees the data end early.
sos = segments(base)[-1]
scan = sos[1] + 2 + sos[2]
write("jpeg-corrupt-scan.jpg", base[: scan + (len(base) - 2 - scan) // 2] + b"\xff\xd9")
# libjpeg-turbo's known CPU bomb: a progressive file whose last scan repeats, 200 times (libjpeg
# only warns and decodes on); 210 scans.
progressive = read("jpeg-progressive.jpg")
last = progressive.rindex(b"\xff\xda")
write("jpeg-bomb-210-scans.jpg", progressive[:-2] + progressive[last:-2] * 200 + b"\xff\xd9")
sof = [s for s in segments(base) if s[0] == 0xC0][0]
write("jpeg-bomb-65500.jpg", base[: sof[1] + 5] + struct.pack(">HH", 65500, 65500) + base[sof[1] + 9:])

def chunks(webp):
    pos, found = 12, []
    while pos < len(webp):
        size = struct.unpack("<I", webp[pos + 4:pos + 8])[0]
        found.append((webp[pos:pos + 4], pos, size))
        pos += 8 + size + (size & 1)
    return found

lossy = read("webp-lossy.webp")
write("webp-truncated.webp", lossy[: len(lossy) // 2])
write("webp-riff-size-lies.webp", lossy[:4] + struct.pack("<I", len(lossy) - 8 + 100) + lossy[8:])
write("webp-trailing-junk.webp", lossy + b"junk")
vp8 = chunks(lossy)[0]
write("webp-chunk-past-end.webp", lossy[: vp8[1] + 4] + struct.pack("<I", vp8[2] + 1000) + lossy[vp8[1] + 8:])
# A sound container whose VP8 token data is cut: sizes fixed, so only decoding notices.
first_partition = struct.unpack("<I", lossy[vp8[1] + 8:vp8[1] + 11] + b"\0")[0] >> 5
keep = 10 + first_partition + 2
payload = lossy[vp8[1] + 8: vp8[1] + 8 + keep]
body = b"WEBP" + b"VP8 " + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) & 1 else b"")
write("webp-corrupt-data.webp", b"RIFF" + struct.pack("<I", len(body)) + body)
alpha = read("webp-alpha.webp")
vp8x = chunks(alpha)[0]
assert vp8x[0] == b"VP8X"
write("webp-bomb-100000.webp", alpha[: vp8x[1] + 12] + struct.pack("<I", 100000 - 1)[:3] + struct.pack("<I", 100000 - 1)[:3]
      + alpha[vp8x[1] + 18:])

gif = read("gif-static.gif")
write("gif-header-alone.gif", b"GIF89a")
write("gif-truncated.gif", gif[: len(gif) // 2])
write("gif-no-trailer.gif", gif[:-1])
write("gif-trailing-junk.gif", gif + b"junk")
write("gif-bomb-65535.gif", gif[:6] + struct.pack("<HH", 65535, 65535) + gif[10:])

def image_data(gif):
    """Offset of the first frame's LZW code size byte and the end of its data sub-blocks."""
    pos = 13 + (3 << ((gif[10] & 7) + 1) if gif[10] & 0x80 else 0)
    while gif[pos] == 0x21:
        pos += 2
        while gif[pos]:
            pos += 1 + gif[pos]
        pos += 1
    assert gif[pos] == 0x2C
    flags = gif[pos + 9]
    pos += 10 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    end = pos + 1
    while gif[end]:
        end += 1 + gif[end]
    return pos, end + 1

# A sound container whose LZW data stops after 3 bytes: only decoding notices.
start, end = image_data(gif)
write("gif-corrupt-lzw.gif", gif[: start + 1] + b"\x03" + gif[start + 2: start + 5] + b"\0" + gif[end:])
# The first frame's descriptor patched to 65535x65535 in a small logical screen.
desc = gif.index(b"\x2c", 13 + (3 << ((gif[10] & 7) + 1) if gif[10] & 0x80 else 0))
write("gif-bomb-frame-65535.gif", gif[: desc + 5] + struct.pack("<HH", 65535, 65535) + gif[desc + 9:])

def png(width, height):
    row = b"\0" + b"\x80\x20\x10" * width
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b"")

write("png-named-as.jpg", png(20, 10))
write("jpeg-named-as.png", base)
write("gif-named-as.webp", gif)
write("html-named-as.jpg", b"<!DOCTYPE html>\n<html><body>Not found</body></html>\n")
write("riff-wave-named-as.webp", b"RIFF" + struct.pack("<I", 4 + 8 + 4) + b"WAVEdata" + struct.pack("<I", 4) + b"\0\0\0\0")
PY

# The expected verdict of every file in both modes: `format WxH frames` or a failure kind.
cat >"$out/expected.tsv" <<'TSV'
# file	structure	full
jpeg-baseline.jpg	jpeg 64x48 1	jpeg 64x48 1
jpeg-progressive.jpg	jpeg 64x48 1	jpeg 64x48 1
jpeg-grayscale.jpg	jpeg 64x48 1	jpeg 64x48 1
jpeg-cmyk.jpg	jpeg 64x48 1	jpeg 64x48 1
jpeg-arithmetic.jpg	jpeg 64x48 1	jpeg 64x48 1
jpeg-restart.jpg	jpeg 64x48 1	jpeg 64x48 1
jpeg-exif-orientation.jpg	jpeg 64x48 1	jpeg 64x48 1
jpeg-appended-image.jpg	jpeg 64x48 1	jpeg 64x48 1
jpeg-trailing-padding.jpg	jpeg 64x48 1	jpeg 64x48 1
jpeg-large-progressive.jpg	jpeg 1024x768 1	jpeg 1024x768 1
jpeg-trailing-junk.jpg	invalid-jpeg	invalid-jpeg
jpeg-truncated.jpg	invalid-jpeg	invalid-jpeg
jpeg-no-eoi.jpg	invalid-jpeg	invalid-jpeg
jpeg-header-alone.jpg	invalid-jpeg	invalid-jpeg
jpeg-segment-past-end.jpg	invalid-jpeg	invalid-jpeg
jpeg-corrupt-scan.jpg	jpeg 64x48 1	invalid-jpeg
jpeg-bomb-65500.jpg	invalid-jpeg	invalid-jpeg
jpeg-progressive-100-scans.jpg	jpeg 64x48 1	jpeg 64x48 1
jpeg-bomb-210-scans.jpg	invalid-jpeg	invalid-jpeg
jpeg-bomb-memory-6144.jpg	jpeg 6144x6144 1	invalid-jpeg
webp-lossy.webp	webp 64x48 1	webp 64x48 1
webp-lossless.webp	webp 64x48 1	webp 64x48 1
webp-alpha.webp	webp 64x48 1	webp 64x48 1
webp-animated.webp	webp 32x24 3	webp 32x24 3
webp-large-lossless.webp	webp 1024x768 1	webp 1024x768 1
webp-truncated.webp	invalid-webp	invalid-webp
webp-riff-size-lies.webp	invalid-webp	invalid-webp
webp-trailing-junk.webp	invalid-webp	invalid-webp
webp-chunk-past-end.webp	invalid-webp	invalid-webp
webp-corrupt-data.webp	webp 64x48 1	invalid-webp
webp-bomb-100000.webp	invalid-webp	invalid-webp
webp-bomb-memory-4500.webp	webp 4500x4500 1	invalid-webp
gif-static.gif	gif 64x48 1	gif 64x48 1
gif-animated.gif	gif 32x24 3	gif 32x24 3
gif-interlaced.gif	gif 64x48 1	gif 64x48 1
gif-87a.gif	gif 64x48 1	gif 64x48 1
gif-large-4096.gif	gif 4096x4096 1	gif 4096x4096 1
gif-header-alone.gif	invalid-gif	invalid-gif
gif-truncated.gif	invalid-gif	invalid-gif
gif-no-trailer.gif	invalid-gif	invalid-gif
gif-trailing-junk.gif	invalid-gif	invalid-gif
gif-corrupt-lzw.gif	gif 64x48 1	invalid-gif
gif-bomb-65535.gif	invalid-gif	invalid-gif
gif-bomb-frame-65535.gif	invalid-gif	invalid-gif
png-named-as.jpg	png 20x10 1	png 20x10 1
jpeg-named-as.png	jpeg 64x48 1	jpeg 64x48 1
gif-named-as.webp	gif 64x48 1	gif 64x48 1
html-named-as.jpg	not-image	not-image
riff-wave-named-as.webp	not-image	not-image
TSV
du -sh "$out"
