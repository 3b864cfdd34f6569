#!/usr/bin/env python3
"""Writes the seed corpora of `make fuzz` into Fuzz/corpus/ (committed; rerun to regenerate)."""
import json, os, shutil, struct, zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    path = os.path.join(HERE, "corpus", target, name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def chunk(kind, payload, length=None, crc=None):
    kind = kind.encode()
    return (struct.pack(">I", len(payload) if length is None else length) + kind + payload
            + struct.pack(">I", zlib.crc32(kind + payload) if crc is None else crc))


def png(width, height, depth=8, colour=2, rows=None, extra=b"", before_idat=b"", interlace=0, after=b""):
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    if rows is None:
        def scanlines(w, h):
            return (bytes([0]) + bytes((w * channels * depth + 7) // 8)) * h if w and h else b""
        if not interlace:
            rows = scanlines(width, height)
        else:
            # Adam7: each pass's own scanlines, and not a byte more (pngcheck rejects extra data).
            passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            rows = b"".join(scanlines((width - x + dx - 1) // dx if width > x else 0,
                                      (height - y + dy - 1) // dy if height > y else 0) for x, y, dx, dy in passes)
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, interlace)
    return (b"\x89PNG\r\n\x1a\n" + chunk("IHDR", ihdr) + before_idat
            + chunk("IDAT", zlib.compress(rows)) + extra + chunk("IEND", b"") + after)


def bomb(kind):
    # IHDR then a chunk that claims 0x7ffffff0 bytes and ends there: 45 bytes in all.
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk("IHDR", ihdr) + struct.pack(">I", 0x7FFFFFF0) + kind.encode() + b"\0" * 4


write("png", "rgb-1x1.png", png(1, 1))
write("png", "rgb-4x3.png", png(4, 3))
write("png", "gray16-2x2.png", png(2, 2, depth=16, colour=0))
write("png", "rgba-2x2.png", png(2, 2, colour=6))
write("png", "palette-2x2.png", png(2, 2, colour=3, before_idat=chunk("PLTE", b"\x10\x20\x30\x40\x50\x60")))
write("png", "gray1-9x1.png", png(9, 1, depth=1, colour=0))
write("png", "interlaced-3x3.png", png(3, 3, interlace=1))
# What interlaced-3x3.png used to be: twice a plain image's rows, more than Adam7 has.
write("png", "interlaced-extra-data.png", png(3, 3, interlace=1, rows=(bytes([0]) + bytes(9)) * 6))
write("png", "text-chunks.png", png(2, 1, before_idat=chunk("tEXt", b"Title\0hello")
                                      + chunk("zTXt", b"Comment\0\0" + zlib.compress(b"compressed text"))
                                      + chunk("iTXt", b"Author\0\0\0en\0\0someone")))
write("png", "bad-crc.png", png(1, 1, extra=chunk("tEXt", b"k\0v", crc=0)))
good = png(2, 2)
write("png", "truncated.png", good[: len(good) - 7])
write("png", "after-iend.png", png(1, 1, after=b"trailing"))
write("png", "huge-ihdr.png", png(60000, 60000, rows=b"\0"))
for kind in ["zTXt", "tEXt", "iTXt", "sPLT"]:
    write("png", "bomb-%s.png" % kind, bomb(kind))

record = '{"albumId": 1, "id": %d, "title": "photo %d", "url": "https://via.placeholder.com/600/92c952", "thumbnailUrl": "https://via.placeholder.com/150/92c952"}'
write("catalog", "three.json", "[\n  " + ",\n  ".join(record % (i, i) for i in range(1, 4)) + "\n]\n")
write("catalog", "empty.json", "[]")
write("catalog", "escapes.json", '[{"albumId": 1, "id": 7, "title": "caf\\u00e9 \\"quoted\\" \\ud83d\\ude00 tab\\t", '
      '"url": "https://x/\\u0041", "thumbnailUrl": "https://x/t"}]')
write("catalog", "extra-fields.json", '[{"albumId": 2, "id": -3, "title": "", "url": "u", "thumbnailUrl": "t", '
      '"extra": {"nested": [1, 2.5e3, true, null, {"a": []}]}}]')
write("catalog", "reordered.json", '[{"url":"https://x/1","thumbnailUrl":"https://x/t","title":"t","id":9223372036854775807,"albumId":0}]')
write("catalog", "duplicate-ids.json", "[" + record % (1, 1) + "," + record % (1, 1) + "]")
write("catalog", "missing-field.json", '[{"albumId": 1, "id": 1, "title": "t", "thumbnailUrl": "t"}]')
write("catalog", "wrong-types.json", '[{"albumId": "1", "id": 1.5, "title": 3, "url": null, "thumbnailUrl": []}]')
write("catalog", "nested.json", '[{"albumId": 1, "id": 1, "title": "t", "url": "u", "thumbnailUrl": "t", "x": ' + "[" * 40 + "]" * 40 + "}]")
write("catalog", "not-array.json", '{"photos": []}')
write("catalog", "string-ids.json", '[{"id": "a/b", "url": "u"}, {"id": "7", "url": "u"}, {"id": "007", "url": "u"}, '
      '{"id": "", "url": "u"}, {"id": "' + "x" * 300 + '", "url": "u"}, {"id": "\\u00dcn\\u00ef\\t", "url": "u"}, {"id": 8, "url": "u"}]')
write("catalog", "bom.json", "\ufeff[" + record % (5, 5) + "]")

digest = "9f" * 32
write("journal", "done.txt", "done\t1\thttps://via.placeholder.com/600/92c952\thttp://127.0.0.1:8080/600/92c952\t139\t%s\t600\t600\t1" % digest)
write("journal", "done-stamped.txt", "done\t2\thttps://x/2\thttps://x/2\t139\t%s\t600\t600\t2\t1234567\t1700000000123456789" % digest)
write("journal", "failed.txt", "failed\t3\thttps://x/3\thttps://x/3\t4\thttp-status\t404\tHTTP 404 from https://x/3")
write("journal", "failed-no-status.txt", "failed\t4\thttps://x/4\thttps://x/4\t1\tnetwork\t-\tconnection refused")
write("journal", "pending.txt", "pending\t5\thttps://x/5\thttps://x/5")
write("journal", "escaped.txt", "failed\t6\thttps://x/a\\tb\\nc\\\\d\thttps://x/6\t1\tnot-png\t-\tmessage with \\t tab and \\n newline")
write("journal", "negative-id.txt", "pending\t-7\thttps://x/7\thttps://x/7")
write("journal", "string-id.txt", "done\t\"a/b\\tc\\\\%%41\thttps://x/8\thttps://x/8\t139\t%s\t600\t600\t1" % digest)
write("journal", "string-id-integer.txt", "pending\t\"7\thttps://x/7\thttps://x/7")

# The JPEG, WebP and GIF seeds are the files of the validators' test corpus (made by
# scripts/make-image-corpus.sh) that fit in make fuzz's 4096-byte inputs.
IMAGES = os.path.join(HERE, "..", "Tests", "ArchiverCoreTests", "Fixtures", "images")
for name in sorted(os.listdir(IMAGES)):
    source = os.path.join(IMAGES, name)
    with open(source, "rb") as f:
        head = f.read(12)
    target = ("jpeg" if head[:3] == b"\xff\xd8\xff" else "webp" if head[:4] == b"RIFF" and head[8:12] == b"WEBP"
              else "gif" if head[:4] == b"GIF8" else None)
    if target and os.path.getsize(source) <= 4096:
        os.makedirs(os.path.join(HERE, "corpus", target), exist_ok=True)
        shutil.copyfile(source, os.path.join(HERE, "corpus", target, name))

# CSV and TSV catalogs (fuzz-csv reads each as CSV, and with commas and tabs swapped as TSV).
os.makedirs(os.path.join(HERE, "corpus", "csv"), exist_ok=True)
HEADER = "albumId,id,title,url,thumbnailUrl\n"
write("csv", "three.csv", HEADER + "".join("1,%d,photo %d,https://via.placeholder.com/600/92c952,https://via.placeholder.com/150/92c952\n" % (i, i)
                                            for i in range(1, 4)))
write("csv", "three.tsv", HEADER.replace(",", "\t") + "1\t1\tphoto\thttps://x/1\thttps://x/t1\n2\t2\t\"tab\tinside\"\thttps://x/2\thttps://x/t2\n"
      "3\t3\t\"a, b\"\thttps://x/3\thttps://x/t3\n")
write("csv", "quotes.csv", 'id,title,url\n1,"say ""hi""",https://x/1\n2,"comma, inside",https://x/2\n3,"line\nbreak",https://x/3\n'
      '"4","quoted id",https://x/4\n')
write("csv", "crlf.csv", "id,url,title\r\n1,https://x/1,one\r\n2,https://x/2,\"two\r\nlines\"\r\n\r\n3,https://x/3,three")
write("csv", "bom.csv", "\ufeffid,url\n1,https://x/1\n")
write("csv", "empty-cells.csv", "albumId,id,title,url,thumbnailUrl\n,1,,https://x/1,\n2,2,t,,https://x/t2\n,,,,\n")
write("csv", "string-ids.csv", 'id,url\na/b,https://x/1\n007,https://x/2\n7,https://x/3\n"x,y",https://x/4\nÜnï,https://x/5\n' + "z" * 240 + ",https://x/6\n")
write("csv", "duplicate-ids.csv", "id,url\n1,https://x/1\n1,https://x/2\n")
write("csv", "header-only.csv", "id,url,title\n")
write("csv", "no-id-column.csv", "name,url\n1,https://x/1\n")
write("csv", "ragged.csv", "id,url\n1,https://x/1,extra\n2\n")
write("csv", "unclosed-quote.csv", 'id,url\n1,"https://x/1\n')
write("csv", "quote-in-field.csv", 'id,url\n1,ht"tp\n')
write("csv", "lone-cr.csv", "id,url\r1,https://x/1\r")
write("csv", "bad-group.csv", "albumId,id,url\nx,1,https://x/1\n")
write("csv", "sha256.csv", "id,url,sha256\n1,https://x/1,%s\n" % ("ab" * 32))
write("csv", "bad-utf8-id.csv", b"id,url\n\xff\xfe,https://x/1\n")

# real-*.csv and real-*.json are not written here: they are catalogs and the manifests the
# archiver made of them (`archiver serve --port P`, then `archiver run --catalog
# real-crlf-string-ids.csv --retries 0` (one 404 and one refused connection), and `archiver run
# --catalog real-five.csv --rate 1 --concurrency 1` stopped by SIGINT after 2.5 s (two pending)).
#
# Manifests as ManifestEncoding writes them (keys sorted, one item per line): done items, failed
# and pending ones, string ids, a shard's header, escapes.
os.makedirs(os.path.join(HERE, "corpus", "manifest"), exist_ok=True)


def item(id, status, album=1, attempts=1, **fields):
    fields.update(albumId=album, attempts=attempts, id=id, status=status)
    fields.setdefault("title", "photo %s" % id)
    fields.setdefault("url", "https://via.placeholder.com/600/%s" % id)
    fields.setdefault("source", fields["url"])
    return "{" + ", ".join("%s: %s" % (json.dumps(key), json.dumps(fields[key], ensure_ascii=False, sort_keys=True))
                           for key in sorted(fields)) + "}"


def manifest(items, source="photos.json", records=None, field="url", shard=None):
    catalog = '{"records": %d, "sha256": "%s"' % (len(items) if records is None else records, "5e" * 32)
    if shard:
        catalog += ', "shard": {"count": %d, "index": %d, "records": %d}' % shard
    catalog += ", \"source\": %s}" % json.dumps(source)
    body = ",\n    ".join(items)
    return ('{\n  "catalog": %s,\n  "field": "%s",\n  "items": [%s],\n  "version": 1\n}\n'
            % (catalog, field, ("\n    " + body + "\n  ") if items else ""))


def done(id, **fields):
    return item(id, "done", bytes=139, format="png", height=600, width=600, path="images/%s.png" % id,
                sha256="9f" * 32, **fields)


failed = item(2, "failed", attempts=4, error={"kind": "http-status", "message": "HTTP 404 from https://x/2", "status": 404})
write("manifest", "mixed.json", manifest([done(1), failed, item(3, "pending", attempts=0),
                                          item(4, "failed", error={"kind": "network", "message": "connection refused"})]))
write("manifest", "empty.json", manifest([]))
write("manifest", "string-ids.json", manifest([done(7), done("a/b", etag='"abc"', lastModified="Tue, 01 Dec 2026 10:00:00 GMT"),
                                               item("007", "pending", attempts=0), item("\u00dcn\u00ef\t\"q\"", "pending", attempts=0)],
                                              source="photos.csv"))
write("manifest", "animated.json", manifest([item(5, "done", bytes=2048, format="gif", frames=3, height=10, width=10,
                                                  path="images/5.gif", sha256="ab" * 32)], field="thumbnailUrl"))
write("manifest", "shard.json", manifest([done(1), failed], records=10, shard=(3, 0, 4)))
write("manifest", "negative.json", manifest([item(-9223372036854775808, "pending", album=-1, attempts=0)]))
write("manifest", "compact.json", '{"version":1,"items":[{"id":1,"albumId":1,"title":"t","url":"u","source":"u","status":"pending","attempts":0}],'
      '"field":"url","catalog":{"source":"s","sha256":"","records":1},"extra":[{"a":"]}"},null]}')
write("manifest", "truncated.json", manifest([done(1), failed])[:200])
write("manifest", "missing-header.json", '{"items": [' + done(1) + "]}")
