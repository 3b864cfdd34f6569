import Foundation

/// The gallery: `index.html`, a small front page (counts, failures by kind, each album's cover,
/// the list of pages), `pages/NNNN.html`, the items in manifest order as a grid of images, at
/// most `itemsPerPage` to a page, each album a headed section and each failure in its place,
/// and `pages/failures-NNNN.html`, the failed items grouped by error kind.
///
/// Nothing from the network: images load lazily from the files the manifest records, the style
/// and the item pages' one script (details in a dialog, a search box) are inline, so every page
/// works from `file://`; without the script every item still links to its image file. Every
/// text is HTML-escaped (string ids too, and they name their anchors by their file names, which
/// need no escaping), and the same manifest gives the same bytes; the file names follow from the
/// manifest's item and failure counts alone (`pageNames`).
enum Gallery {
    /// The largest side of an image's `width`/`height` on the page, in CSS pixels (the grid's
    /// style then sizes each image to its column).
    static let thumbnailSide = 150

    /// Albums (runs of one album) the front page shows by their cover, at most; it links the
    /// rest by number (up to `listedGroups`). Measured in headless Chromium on a loaded 2-core
    /// machine: 2000 covers made the front page take about 0.6 s longer to show than 500.
    static let coveredGroups = 500

    /// Bytes of a title a cover's alt text keeps (the rest is `…`): 500 covers stay near 200 KB.
    static let coverTitleBytes = 100

    /// Items on an item page, and failed items on a failures page, at most.
    static let itemsPerPage = 1000

    /// Groups (runs of consecutive items in one album) the front page links to, at most; with
    /// more, it lists only the pages, each with the albums it starts and ends in. 500 covers and
    /// 9500 links take at most about 800 KB.
    static let listedGroups = 10_000

    /// Writes the gallery for `manifest` into the bundle, streaming each page to disk and
    /// putting them all in place at the end (see `GalleryWriter`); with `sync`, durably.
    static func write(for manifest: Manifest, in layout: BundleLayout, sync: Bool = false) throws(FileSystemError) {
        let items = manifest.items
        let writer = try GalleryWriter(
            layout: layout, source: manifest.catalog.source, count: items.count, sync: sync,
            id: { items[$0].id }, album: { items[$0].albumId })
        var counts: [ItemRecord.Status: Int] = [:]
        for item in items {
            counts[item.status, default: 0] += 1
            writer.add(item)
        }
        try writer.commit(counts: counts, item: { items[$0] })
    }

    /// An id as a page shows it, escaped: an integer in decimal, a string as it is, cut after
    /// `RecordKey.maxIDBytes` bytes with `…` (a longer one failed as `unsafe-key`; the manifest
    /// has it whole).
    static func shown(_ id: RecordID) -> String {
        guard let text = id.string else { return id.text }
        guard text.utf8.count > RecordKey.maxIDBytes else { return escape(text) }
        return escape(text.prefix(utf8Bytes: RecordKey.maxIDBytes)) + "…"
    }

    /// What follows `item-` in an item's anchor, and `group-` in an album's: an id's file name
    /// (`RecordKey`: letters, digits, `-_.%~`, nothing to escape in an attribute or a fragment),
    /// or for an id that has none, `~` and 16 hex digits of its SHA-256 (no file name starts with `~`).
    static func anchor(_ id: RecordID) -> String {
        if let stem = id.stem { return stem }
        return "~" + SHA256.hex(Data(id.text.utf8)).prefix(16)
    }

    /// The image format a done item's details name: the manifest's format; for a manifest of an
    /// older version, read from the extension of its recorded path (`jpeg` for `.jpg`), `png`
    /// without a path.
    static func format(of item: Manifest.Item) -> String {
        if let format = item.format { return format.rawValue }
        guard let path = item.path, let dot = path.utf8.lastIndex(of: 0x2E) else { return ImageFormat.png.rawValue }
        let ext = path[path.index(after: dot)...]
        return (ImageFormat(fileExtension: ext) ?? ImageFormat(fileExtension: ext.lowercased()))?.rawValue ?? String(ext)
    }

    /// Pages needed for `count` items.
    static func pageCount(_ count: Int) -> Int {
        (count + itemsPerPage - 1) / itemsPerPage
    }

    /// The name of item page `number` (from 1) of `count`: `0001.html`, with more digits when
    /// there are more than 9999 pages.
    static func pageName(_ number: Int, of count: Int) -> String {
        padded(number, of: count) + ".html"
    }

    /// The name of failures page `number` (from 1) of `count`: `failures-0001.html`.
    static func failuresPageName(_ number: Int, of count: Int) -> String {
        "failures-" + padded(number, of: count) + ".html"
    }

    private static func padded(_ number: Int, of count: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, max(4, String(count).count) - digits.count)) + digits
    }

    /// The names in `pages/` of a gallery for `items` items of which `failed` failed, sorted.
    static func pageNames(items: Int, failed: Int) -> [String] {
        let pages = pageCount(items)
        let failurePages = pageCount(failed)
        return (0..<pages).map { pageName($0 + 1, of: pages) }
            + (0..<failurePages).map { failuresPageName($0 + 1, of: failurePages) }
    }

    /// Whether `name` in `pages/` looks like a page some gallery would write (`0012.html`,
    /// `failures-0003.html`): what a rewrite may remove when the new gallery has fewer.
    static func isPageName(_ name: String) -> Bool {
        var stem = Substring(name)
        guard stem.hasSuffix(".html") else { return false }
        stem = stem.dropLast(5)
        if stem.hasPrefix("failures-") { stem = stem.dropFirst(9) }
        return stem.count >= 4 && stem.allSatisfy { ("0"..."9").contains($0) }
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

    /// "1 item", "2 items": how the gallery counts items.
    static func items(_ count: Int) -> String {
        count == 1 ? "1 item" : "\(count) items"
    }

    /// `text` with `& < > " '` replaced by entities, safe in element content and quoted attributes.
    static func escape(_ text: String) -> String {
        // Most titles and URLs need nothing escaped; checking bytes first keeps the page cheap.
        guard text.containsUTF8Byte(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            return text
        }
        var html = HTMLText()
        html.escaped(text)
        return String(decoding: html.bytes, as: UTF8.self)
    }
}
