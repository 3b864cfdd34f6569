/// The pieces of the gallery's pages, built as bytes: with string interpolation and a String per
/// row, the page took most of the time a run spends after its last download.
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

        /// `images/<id>.png` as seen from `pages/`, as a URL: a string id's file name (`RecordKey`)
        /// with its `%` written `%25`. An integer's is made without a String.
        mutating func imagePath(_ id: RecordID) {
            bytes.appendLiteral("../images/")
            if let integer = id.integer {
                bytes.appendDecimal(integer)
            } else if let stem = id.stem {
                for byte in stem.utf8 {
                    if byte == 0x25 { bytes.appendLiteral("%25") } else { bytes.append(byte) }
                }
            }
            bytes.appendLiteral(".png")
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

        /// The catalog URL, and the URL fetched when `--mirror` made it another.
        mutating func urls(of item: Manifest.Item) {
            link(item.url)
            if item.source != item.url {
                add("<br><small>fetched from ")
                link(item.source)
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

        /// Closes `<main>` and the page, with `footer` (the page's links again) in between.
        mutating func tail(footer: String) {
            add("</main>\n<footer>")
            add(footer)
            add("</footer>\n</body>\n</html>\n")
        }

        /// One item's row on an item page: its thumbnail, its error, or that it is pending.
        mutating func itemRow(_ item: Manifest.Item) {
            add("<tr class=\"")
            add(item.status.rawValue)
            add("\" id=\"item-")
            anchor(item.id)
            add("\"><td class=\"image\">")
            switch item.status {
            case .done:
                let (width, height) = thumbnailSize(width: item.width, height: item.height)
                add("<a href=\"")
                imagePath(item.id)
                add("\"><img loading=\"lazy\" src=\"")
                imagePath(item.id)
                add("\" width=\"")
                add(width)
                add("\" height=\"")
                add(height)
                add("\" alt=\"")
                escaped(item.title)
                add("\"></a>")
            case .failed:
                add("<div class=\"error\"><b>")
                escaped(item.error.map { $0.kind + ($0.status.map { " \($0)" } ?? "") } ?? "failed")
                add("</b> ")
                escaped(item.error?.message ?? "no error recorded")
                add("</div>")
            case .pending:
                add("<div class=\"pending\">pending</div>")
            }
            add("</td><td class=\"title\">")
            escaped(item.title)
            add("</td><td class=\"id\">#")
            add(item.id)
            add("</td><td class=\"url\">")
            urls(of: item)
            add("</td></tr>\n")
        }

        /// One failed item's row on a failures page; its id links to its row on `page`.
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

    static let style = """
        body{font:14px/1.4 system-ui,sans-serif;margin:0 1.5em;color:#222;background:#fafafa}\
        header p,nav{color:#555}nav a{margin-right:.2em}footer{margin:1em 0}\
        h2{margin:1.5em 0 .4em;border-bottom:1px solid #ccc}h2 small{color:#777;font-weight:normal}\
        table{border-collapse:collapse;width:100%}th{text-align:left;color:#555}\
        td{border-bottom:1px solid #eee;padding:4px 8px;vertical-align:middle}\
        td.image{width:13em;height:79px}\
        td.image img{display:block;background:#ddd}\
        td.id{color:#777;white-space:nowrap}td.url{font-size:12px;overflow-wrap:anywhere;width:24em}\
        td.message{color:#a00;font-size:12px;overflow-wrap:anywhere}\
        tr.failed{background:#fff0f0}tr.pending{background:#fffbe6}\
        div.error{color:#a00;font-size:12px}div.pending{color:#960;font-style:italic}
        """
}
