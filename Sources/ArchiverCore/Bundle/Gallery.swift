import Foundation

/// `index.html`: one self-contained page showing a bundle's manifest, grouped by album.
///
/// No script and no network: images load from `images/<id>.png` next to the page, so it works
/// from `file://`. Every text is HTML-escaped, and the same manifest gives the same bytes.
public enum Gallery {
    /// The largest side of a thumbnail on the page, in CSS pixels.
    public static let thumbnailSide = 75

    /// Writes `index.html` for `manifest` into the bundle atomically, streaming it to disk; with
    /// `sync`, durably.
    public static func write(for manifest: Manifest, in layout: BundleLayout, sync: Bool = false) throws(ItemError) {
        try write(Contents(manifest), in: layout, sync: sync) { manifest.items[$0] }
    }

    /// Writes the page for `contents`, asking `item` for each row's item as it is written.
    /// `beforeCommit` runs once every row is made; throwing leaves the old page in place.
    static func write(
        _ contents: Contents, in layout: BundleLayout, sync: Bool, item: (Int) -> Manifest.Item,
        beforeCommit: () throws(ItemError) -> Void = {}
    ) throws(ItemError) {
        let writer = try AtomicFileWriter(path: layout.gallery.path, sync: sync)
        render(contents, item: item) { writer.append($0) }
        try beforeCommit()
        try writer.commit()
    }

    /// The page for `manifest`.
    public static func html(for manifest: Manifest) -> String {
        var page: [UInt8] = []
        render(Contents(manifest), item: { manifest.items[$0] }) { page += $0 }
        return String(decoding: page, as: UTF8.self)
    }

    /// What the page shows before its rows, and the order of the rows: by album, then by id.
    /// A row is a reference (`ref`) that the renderer turns into an item only when it writes it.
    struct Contents {
        var source: String
        var counts: [ItemRecord.Status: Int]
        /// Each ref's album.
        var albums: [Int]
        /// Refs in page order: by album, then by id.
        var order: [Int32]
        /// Each album in page order, with how many rows it has.
        var sections: [(album: Int, count: Int)] = []

        /// `albums[ref]` and `id(ref)` give each ref's sort key; refs already in order (the
        /// common case: catalogs list albums in turn) are not sorted.
        init(source: String, counts: [ItemRecord.Status: Int], albums: [Int], id: (Int) -> Int) {
            self.source = source
            self.counts = counts
            self.albums = albums
            order = Array(0..<Int32(albums.count))
            let sorted = albums.indices.dropFirst().allSatisfy { (albums[$0 - 1], id($0 - 1)) <= (albums[$0], id($0)) }
            if !sorted {
                order.sort { (albums[Int($0)], id(Int($0))) < (albums[Int($1)], id(Int($1))) }
            }
            for ref in order {
                let album = albums[Int(ref)]
                if sections.last?.album == album { sections[sections.count - 1].count += 1 } else { sections.append((album, 1)) }
            }
        }

        init(_ manifest: Manifest) {
            var counts: [ItemRecord.Status: Int] = [:]
            for item in manifest.items { counts[item.status, default: 0] += 1 }
            self.init(
                source: manifest.catalog.source, counts: counts, albums: manifest.items.map(\.albumId),
                id: { manifest.items[$0].id })
        }
    }

    /// Hands the page to `emit` as UTF-8, a piece of about 64 KiB at a time.
    ///
    /// Rows are built as bytes: with string interpolation and a String per row, the page took
    /// most of the time a run spends after its last download.
    static func render(_ contents: Contents, item: (Int) -> Manifest.Item, emit: ([UInt8]) -> Void) {
        emit(head(contents, counts: contents.counts))
        var body = Body(contents)
        while let ref = body.nextRef {
            body.add(item(ref))
            if body.bytes.count >= 1 << 16 { emit(body.take()) }
        }
        body.finish()
        emit(body.take())
    }

    /// Everything before the first row: the page's title, its counts and the albums' links. A run
    /// writes the rows (`Body`) as their items finish, and this last, when the counts are known.
    static func head(_ contents: Contents, counts: [ItemRecord.Status: Int]) -> [UInt8] {
        let rows = contents.order.count
        var page = Page()
        page.add(
            """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Archived images (\(rows))</title>
            <style>\(style)</style>
            </head>
            <body>
            <header>
            <h1>Archived images</h1>
            <p>\(rows) items from \(escape(contents.source)): \
            \(counts[.done, default: 0]) done, \(counts[.failed, default: 0]) failed, \
            \(counts[.pending, default: 0]) pending.</p>
            <nav>Albums:
            """)
        for section in contents.sections {
            page.add(" <a href=\"#album-\(section.album)\">\(section.album)</a>")
        }
        page.add("</nav>\n</header>\n<main>\n")
        return page.bytes
    }

    /// The rows and album sections after the head, made one item at a time in page order.
    struct Body {
        let contents: Contents
        /// The next row, as an index into `contents.order`.
        private(set) var next = 0
        private var section = -1
        private var left = 0
        private var page = Page()

        init(_ contents: Contents) {
            self.contents = contents
        }

        /// The ref whose item the next row shows, or nil after the last.
        var nextRef: Int? {
            next < contents.order.count ? Int(contents.order[next]) : nil
        }

        /// Bytes made and not yet taken.
        var bytes: [UInt8] { page.bytes }

        /// The row for `nextRef`'s item, opening its album's section first if it is the album's first.
        mutating func add(_ item: Manifest.Item) {
            if left == 0 {
                if section >= 0 { page.add("</table>\n</section>\n") }
                section += 1
                let (album, count) = contents.sections[section]
                page.add("<section id=\"album-\(album)\">\n<h2>Album \(album) <small>(\(count) items)</small></h2>\n")
                page.add("<table>\n")
                left = count
            }
            row(for: item, into: &page)
            left -= 1
            next += 1
        }

        /// Closes the last section and the page; call it after the last row.
        mutating func finish() {
            if section >= 0 { page.add("</table>\n</section>\n") }
            page.add("</main>\n</body>\n</html>\n")
        }

        /// The bytes made since the last take.
        mutating func take() -> [UInt8] {
            defer { page.bytes.removeAll(keepingCapacity: true) }
            return page.bytes
        }
    }

    /// The page's bytes as they are built; text is escaped for element content and quoted attributes.
    private struct Page {
        var bytes: [UInt8] = []

        mutating func add(_ text: String) {
            bytes.appendUTF8(text)
        }

        mutating func add(_ number: Int) {
            bytes.appendDecimal(number)
        }

        /// `KeyedStore.relativePath(for: id)`, without making it a String first.
        mutating func path(_ id: Int) {
            bytes.appendLiteral("images/")
            bytes.appendDecimal(id)
            bytes.appendLiteral(".png")
        }

        /// `text` with `& < > " '` replaced by entities; the runs between them are copied whole.
        mutating func escaped(_ text: String) {
            var text = text
            text.withUTF8 { utf8 in
                var start = 0
                for index in utf8.indices {
                    let entity: StaticString
                    switch utf8[index] {
                    case 0x26: entity = "&amp;"
                    case 0x3C: entity = "&lt;"
                    case 0x3E: entity = "&gt;"
                    case 0x22: entity = "&quot;"
                    case 0x27: entity = "&#39;"
                    default: continue
                    }
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                    bytes.append(contentsOf: UnsafeBufferPointer(start: entity.utf8Start, count: entity.utf8CodeUnitCount))
                    start = index + 1
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
            }
        }

        /// A link for http(s) URLs; anything else (e.g. `javascript:`) is shown as plain text.
        mutating func link(_ url: String) {
            guard Gallery.isHTTP(url) else { return escaped(url) }
            add("<a href=\"")
            escaped(url)
            add("\" rel=\"noreferrer\">")
            escaped(url)
            add("</a>")
        }
    }

    private static func row(for item: Manifest.Item, into page: inout Page) {
        page.add("<tr class=\"")
        page.add(item.status.rawValue)
        page.add("\" id=\"item-")
        page.add(item.id)
        page.add("\"><td class=\"image\">")
        switch item.status {
        case .done:
            let (width, height) = thumbnailSize(width: item.width, height: item.height)
            page.add("<a href=\"")
            page.path(item.id)
            page.add("\"><img loading=\"lazy\" src=\"")
            page.path(item.id)
            page.add("\" width=\"")
            page.add(width)
            page.add("\" height=\"")
            page.add(height)
            page.add("\" alt=\"")
            page.escaped(item.title)
            page.add("\"></a>")
        case .failed:
            page.add("<div class=\"error\"><b>")
            page.escaped(item.error.map { $0.kind + ($0.status.map { " \($0)" } ?? "") } ?? "failed")
            page.add("</b> ")
            page.escaped(item.error?.message ?? "no error recorded")
            page.add("</div>")
        case .pending:
            page.add("<div class=\"pending\">pending</div>")
        }
        page.add("</td><td class=\"title\">")
        page.escaped(item.title)
        page.add("</td><td class=\"id\">#")
        page.add(item.id)
        page.add("</td><td class=\"url\">")
        page.link(item.url)
        if item.source != item.url {
            page.add("<br><small>fetched from ")
            page.link(item.source)
            page.add("</small>")
        }
        page.add("</td></tr>\n")
    }

    /// Whether `url` starts with http:// or https://, in any case.
    static func isHTTP(_ url: String) -> Bool {
        // Compared byte by byte, lowercasing ASCII letters: a row has up to two links.
        func hasPrefix(_ prefix: StaticString) -> Bool {
            var utf8 = url.utf8.makeIterator()
            for index in 0..<prefix.utf8CodeUnitCount {
                guard let byte = utf8.next() else { return false }
                let lowered = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
                if lowered != prefix.utf8Start[index] { return false }
            }
            return true
        }
        return hasPrefix("http://") || hasPrefix("https://")
    }

    /// The recorded size scaled up or down to fit a `thumbnailSide` square, keeping the aspect ratio.
    static func thumbnailSize(width: Int?, height: Int?) -> (Int, Int) {
        guard let width, let height, width > 0, height > 0 else { return (thumbnailSide, thumbnailSide) }
        let side = Double(thumbnailSide)
        let scale = side / Double(max(width, height))
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    /// `text` with `& < > " '` replaced by entities, safe in element content and quoted attributes.
    public static func escape(_ text: String) -> String {
        // Most titles and URLs need nothing escaped; checking bytes first keeps the page cheap.
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            return text
        }
        var page = Page()
        page.escaped(text)
        return String(decoding: page.bytes, as: UTF8.self)
    }

    private static let style = """
        body{font:14px/1.4 system-ui,sans-serif;margin:0 1.5em;color:#222;background:#fafafa}\
        header p,nav{color:#555}nav a{margin-right:.2em}\
        h2{margin:1.5em 0 .4em;border-bottom:1px solid #ccc}h2 small{color:#777;font-weight:normal}\
        table{border-collapse:collapse;width:100%}\
        td{border-bottom:1px solid #eee;padding:4px 8px;vertical-align:middle}\
        td.image{width:13em;height:79px}\
        td.image img{display:block;background:#ddd}\
        td.id{color:#777;white-space:nowrap}td.url{font-size:12px;overflow-wrap:anywhere;width:24em}\
        tr.failed{background:#fff0f0}tr.pending{background:#fffbe6}\
        div.error{color:#a00;font-size:12px}div.pending{color:#960;font-style:italic}
        """
}
