/// The pieces of the gallery's pages, built as bytes: with string interpolation and a String per
/// row (as the items were then), the page took most of the time a run spends after its last download.
extension Gallery {
    /// A page's bytes as they are built; text is escaped for element content and quoted attributes.
    struct HTMLText {
        var bytes: [UInt8] = []

        mutating func add(_ text: String) {
            bytes.appendUTF8(text)
        }

        mutating func add(_ number: Int) {
            bytes.appendDecimal(number)
        }

        /// The item's image file as a URL from a page in `pages/` (`fromPages`) or from the front
        /// page: the path the manifest records (`images/<key>.<ext>`: the extension is the
        /// format's, never assumed), or for an item recorded without one, its id's `KeyedStore`
        /// path. Every byte but letters, digits, `-_.~/` is percent-encoded (a key's `%` as
        /// `%25`), so the URL names the file and needs no escaping in an attribute.
        mutating func imagePath(_ item: Manifest.Item, fromPages: Bool) {
            if fromPages { bytes.appendLiteral("../") }
            if item.path == nil, let integer = item.id.integer {
                bytes.appendLiteral("images/")
                bytes.appendDecimal(integer)
                bytes.appendLiteral(".")
                bytes.appendUTF8((item.format ?? .png).fileExtension)
                return
            }
            guard let path = item.path ?? KeyedStore.relativePath(for: item.id, format: item.format ?? .png) else { return }
            let hex: StaticString = "0123456789ABCDEF"
            for byte in path.utf8 {
                switch byte {
                case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E, 0x2F: bytes.append(byte)
                default: bytes += [0x25, hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)]]
                }
            }
        }

        /// An id as the page shows it (see `Gallery.shown`).
        mutating func add(_ id: RecordID) {
            if let integer = id.integer { return bytes.appendDecimal(integer) }
            bytes.appendUTF8(Gallery.shown(id))
        }

        /// What follows `item-` (or `group-`) in an item's anchor (see `Gallery.anchor`).
        mutating func anchor(_ id: RecordID) {
            if let integer = id.integer { return bytes.appendDecimal(integer) }
            bytes.appendUTF8(Gallery.anchor(id))
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

        /// The catalog URL, and the URL fetched when `--mirror` made it another, as plain text:
        /// a mirror is often a private address that means nothing to whoever opens the bundle.
        mutating func urls(of item: Manifest.Item) {
            link(item.url)
            if item.source != item.url {
                add("<br><small>fetched from ")
                escaped(item.source)
                add("</small>")
            }
        }

        /// Everything up to `<main>`: the document head, then `header` (the `<h1>` and the rest).
        mutating func head(title: String, header: String) {
            add(
                """
                <!DOCTYPE html>
                <html lang="en">
                <head>
                <meta charset="utf-8">
                <meta name="viewport" content="width=device-width, initial-scale=1">
                <title>\(title)</title>
                <style>\(Gallery.style)</style>
                </head>
                <body>
                <header>
                <h1>\(title)</h1>

                """)
            add(header)
            add("</header>\n<main>\n")
        }

        /// Closes `<main>` and the page, with `footer` (the page's links again) in between, and
        /// `end` (an item page's dialog and script) after the footer.
        mutating func tail(footer: String, end: String = "") {
            add("</main>\n<footer>")
            add(footer)
            add("</footer>\n")
            add(end)
            add("</body>\n</html>\n")
        }

        /// One item's tile on an item page: its image (a link to the file, carrying what the
        /// details show in `data-` attributes), its error in place, or that it is pending; then
        /// its title and id.
        mutating func itemTile(_ item: Manifest.Item) {
            add("<li class=\"")
            add(item.status.rawValue)
            add("\" id=\"item-")
            anchor(item.id)
            add("\">")
            switch item.status {
            case .done:
                add("<a href=\"")
                imagePath(item, fromPages: true)
                add("\" data-f=\"")
                escaped(Gallery.format(of: item))
                if let width = item.width, let height = item.height {
                    add("\" data-w=\"")
                    add(width)
                    add("\" data-h=\"")
                    add(height)
                }
                if let size = item.bytes {
                    add("\" data-b=\"")
                    bytes.appendDecimal(size)
                }
                if let sha256 = item.sha256 {
                    add("\" data-s=\"")
                    escaped(sha256)
                }
                add("\" data-u=\"")
                escaped(item.url)
                if item.source != item.url {
                    add("\" data-m=\"")
                    escaped(item.source)
                }
                add("\">")
                image(item, fromPages: true)
                add("</a>")
            case .failed:
                add("<div class=\"tile\"><b>")
                escaped(item.error.map { $0.kind + ($0.status.map { " \($0)" } ?? "") } ?? "failed")
                add("</b> ")
                escaped(item.error?.message ?? "no error recorded")
                add("</div>")
            case .pending:
                add("<div class=\"tile\">pending</div>")
            }
            add("<p><span class=\"t\">")
            escaped(item.title)
            add("</span> <small>#")
            add(item.id)
            add("</small></p></li>\n")
        }

        /// The item's image, loaded lazily, sized to fit a `thumbnailSide` square, with its title
        /// (or `alt`) as alt text.
        mutating func image(_ item: Manifest.Item, fromPages: Bool, alt: String? = nil) {
            let (width, height) = thumbnailSize(width: item.width, height: item.height)
            add("<img loading=\"lazy\" src=\"")
            imagePath(item, fromPages: fromPages)
            add("\" width=\"")
            add(width)
            add("\" height=\"")
            add(height)
            add("\" alt=\"")
            escaped(alt ?? item.title)
            add("\">")
        }

        /// One failed item's row on a failures page; its id links to its tile on `page`.
        mutating func failureRow(_ item: Manifest.Item, page: String) {
            add("<tr id=\"item-")
            anchor(item.id)
            add("\"><td class=\"id\"><a href=\"")
            add(page)
            add("#item-")
            anchor(item.id)
            add("\">#")
            add(item.id)
            add("</a></td><td class=\"title\">")
            escaped(item.title)
            add("</td><td class=\"url\">")
            urls(of: item)
            add("</td><td class=\"status\">")
            if let status = item.error?.status { add(status) }
            add("</td><td class=\"message\">")
            escaped(item.error?.message ?? "no error recorded")
            add("</td></tr>\n")
        }

        /// The links at the top and bottom of a page: the front page, the previous and the next.
        static func navigation(number: Int, count: Int, name: (Int) -> String) -> String {
            var links = "<nav><a href=\"../index.html\">Index</a>"
            links += number > 1 ? " · <a href=\"\(name(number - 1))\" rel=\"prev\">Previous</a>" : " · Previous"
            links += number < count ? " · <a href=\"\(name(number + 1))\" rel=\"next\">Next</a>" : " · Next"
            return links + " · page \(number) of \(count)</nav>\n"
        }
    }
}
