/// The pages written at the end, when every outcome is known: the failures pages and the front page.
extension GalleryWriter {
    /// The failure kinds in page order (sorted by their bytes), each with its anchor on the
    /// failures pages and the indices of its items in manifest order.
    private var kinds: [(kind: String, anchor: String, indices: [Int32])] {
        failures.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.enumerated().map { ordinal, kind in
            // A kind of the archiver's own (`http-status`) is its own anchor; anything else a
            // manifest may hold gets its place instead, so no anchor needs escaping.
            let plain = !kind.isEmpty && kind.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
            return (kind, "kind-" + (plain ? kind : String(ordinal + 1)), failures[kind]!)
        }
    }

    /// Writes `pages/failures-NNNN.html`: every failed item, grouped by kind, at most
    /// `Gallery.itemsPerPage` to a page, a kind's heading repeated on the page it continues on.
    /// Returns how many failed items there are.
    func writeFailures(item: (Int) -> Manifest.Item) -> Int {
        let kinds = kinds
        let total = kinds.reduce(0) { $0 + $1.indices.count }
        let pages = Gallery.pageCount(total)
        let perPage = Gallery.itemsPerPage
        var written = 0
        var file: AtomicFileWriter?
        for (kind, anchor, indices) in kinds {
            for (number, index) in indices.enumerated() {
                if written % perPage == 0 {
                    let page = written / perPage + 1
                    let last = min(total, written + perPage)
                    file = beginFile(
                        Gallery.failuresPageName(page, of: pages), title: "Failures, page \(page) of \(pages)",
                        header: "<p>Failed items \(written + 1) to \(last) of \(total), grouped by error kind, "
                            + "from <a href=\"../manifest.json\">manifest.json</a>.</p>\n",
                        navigation: Gallery.HTMLText.navigation(number: page, count: pages) { Gallery.failuresPageName($0, of: pages) })
                }
                if number == 0 || sectionOpen == nil {
                    closeSection()
                    html.add(number == 0 ? "<section id=\"\(anchor)\">\n<h2>" : "<section>\n<h2>")
                    html.escaped(kind)
                    html.add(" <small>(\(number == 0 ? "" : "continued, ")\(Gallery.items(indices.count)))</small></h2>\n<table>\n")
                    html.add("<tr><th>id</th><th>title</th><th>URL</th><th>status</th><th>message</th></tr>\n")
                    sectionOpen = "</table>"
                }
                html.failureRow(item(Int(index)), page: Gallery.pageName(Int(index) / perPage + 1, of: self.pages))
                written += 1
                if written % perPage == 0 || written == total {
                    endFile(&file)
                } else {
                    spill(&file)
                }
            }
        }
        return total
    }

    /// Writes `index.html`: the counts, the failures by kind, the albums (each run of items in one
    /// album shown by its cover, linked to where it starts; by number only past
    /// `Gallery.coveredGroups`, not at all past `Gallery.listedGroups`), and the list of pages
    /// with the ids and albums each holds. `item` makes the item at an index (the covers).
    func writeFrontPage(counts: [ItemRecord.Status: Int], item: (Int) -> Manifest.Item) {
        var file = create(layout.gallery.path)
        let failed = failures.values.reduce(0) { $0 + $1.count }
        html.head(
            title: "Archived images (\(count))",
            header: "<p>\(Gallery.items(count)) from \(Gallery.escape(source)): \(counts[.done, default: 0]) done, "
                + "\(counts[.failed, default: 0]) failed, \(counts[.pending, default: 0]) pending.</p>\n"
                + "<nav><a href=\"#failures\">Failures</a> · <a href=\"#albums\">Albums</a> · <a href=\"#pages\">Pages</a></nav>\n")

        html.add("<section id=\"failures\">\n<h2>Failures <small>(\(failed))</small></h2>\n")
        if failed == 0 {
            html.add("<p>None.</p>\n")
        } else {
            html.add("<ul>\n")
            var before = 0
            let pages = Gallery.pageCount(failed)
            for (kind, anchor, indices) in kinds {
                let page = Gallery.failuresPageName(before / Gallery.itemsPerPage + 1, of: pages)
                html.add("<li><a href=\"pages/\(page)#\(anchor)\">")
                html.escaped(kind)
                html.add("</a>: \(Gallery.items(indices.count))</li>\n")
                before += indices.count
            }
            html.add("</ul>\n")
        }
        html.add("</section>\n")

        var groups = 0
        var start = 0
        while start < count {
            start = run(from: start).end
            groups += 1
        }
        html.add("<section id=\"albums\">\n<h2>Albums <small>(\(groups) runs in id order)</small></h2>\n")
        if groups <= Gallery.listedGroups {
            html.add("<ul class=\"grid covers\">\n")
            for (start, cover, failed) in covers {
                addCover(start: Int(start), cover: cover < 0 ? nil : item(Int(cover)), failed: Int(failed))
                spill(&file)
            }
            html.add("</ul>\n")
            start = covers.count < groups ? covers.last.map { run(from: Int($0.start)).end } ?? 0 : count
            if start < count { html.add("<p>The other \(groups - covers.count), by number:</p>\n<nav>") }
            while start < count {
                let group = run(from: start)
                let page = Gallery.pageName(start / Gallery.itemsPerPage + 1, of: pages)
                html.add(" <a href=\"pages/\(page)#group-\(anchor(start))\">\(group.album)</a>")
                start = group.end
                spill(&file)
                if start == count { html.add("</nav>\n") }
            }
        } else {
            html.add("<p>Too many to list here: each page below names the albums it starts and ends in, and heads each album's items.</p>\n")
        }
        html.add("</section>\n")

        html.add("<section id=\"pages\">\n<h2>Pages <small>(\(pages), up to \(Gallery.itemsPerPage) items each)</small></h2>\n<ol>\n")
        for number in 0..<pages {
            let (first, last) = (number * Gallery.itemsPerPage, min(count, (number + 1) * Gallery.itemsPerPage) - 1)
            html.add("<li><a href=\"pages/\(Gallery.pageName(number + 1, of: pages))\">Page \(number + 1)</a>: ")
            html.add("#\(shown(first)) to #\(shown(last)), album \(album(first)) to \(album(last))</li>\n")
            spill(&file)
        }
        html.add("</ol>\n</section>\n")
        html.tail(footer: "The bundle's contents are listed in <a href=\"manifest.json\">manifest.json</a>.")
        seal(&file)
    }

    /// One album's card on the front page: its cover (its first done image, its title as alt
    /// text; a tile saying there is none), its number and counts, linked to where it starts.
    private func addCover(start: Int, cover: Manifest.Item?, failed: Int) {
        let group = run(from: start)
        html.add(cover == nil ? "<li class=\"failed\">" : "<li>")
        html.add("<a href=\"pages/\(Gallery.pageName(start / Gallery.itemsPerPage + 1, of: pages))#group-\(anchor(start))\">")
        if let cover {
            let title = cover.title
            let alt = title.utf8.count > Gallery.coverTitleBytes ? title.prefix(utf8Bytes: Gallery.coverTitleBytes) + "…" : title
            html.image(cover, fromPages: false, alt: alt)
        } else {
            html.add("<div class=\"tile\">no image</div>")
        }
        html.add("<span><b>Album \(group.album)</b><small>#\(shown(start)) · \(Gallery.items(group.end - group.start))")
        if failed > 0 { html.add(" · \(failed) failed") }
        html.add("</small></span></a></li>\n")
    }
}
