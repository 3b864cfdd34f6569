#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Writes the paged gallery as its items arrive in manifest order, and puts it in place at once.
///
/// An item page's head needs only the item count and the ids, so each page is written straight
/// to its temporary file as its tiles are made, and sealed (closed, still unnamed) when full:
/// nothing is copied at the end. Failed items are remembered by index (4 bytes each) and their
/// rows made again at the end, grouped by kind (`commit`), with the front page, which counts
/// everything. No old file is replaced before `commit`, which renames the item pages, then the
/// failures pages, then `index.html`, and only then removes the pages the new gallery no longer
/// has: `index.html` never links to a missing page.
final class GalleryWriter {
    let layout: BundleLayout
    let source: String
    /// Items in the gallery, and item pages.
    let count: Int
    let pages: Int
    private let sync: Bool
    private let fileSystem: any FileSystem
    /// The id and the album of the item at an index in manifest order.
    let id: (Int) -> RecordID
    let album: (Int) -> Int

    /// The index of the item the next `add` takes.
    private(set) var next = 0
    private var page: AtomicFileWriter?
    private var navigation = ""
    /// What the open file's page ends with after its footer (an item page's dialog and script).
    private var pageEnd = ""
    var html = Gallery.HTMLText()
    /// The tag that closes the open section's list (`</ul>` of tiles, `</table>` of failures), if one is open.
    var sectionOpen: String?
    /// The run of items in one album that the last tile belongs to: its album, first index and end.
    private var group: (album: Int, start: Int, end: Int)?
    /// The first `Gallery.coveredGroups` runs of one album: where each starts, its cover (its
    /// first done item; -1 for none yet) and how many of its items failed.
    var covers: [(start: Int32, cover: Int32, failed: Int32)] = []
    /// Whether the run the last item belongs to is one of `covers`.
    private var coveredRun = false
    /// Sealed files waiting for `commit`, in the order they are put in place.
    private var sealed: [AtomicFileWriter] = []
    /// Failed items' indices, by error kind.
    var failures: [String: [Int32]] = [:]
    /// The first failure to create or write a page, reported by `commit`.
    private var failure: FileSystemError?

    init(
        layout: BundleLayout, source: String, count: Int, sync: Bool, fileSystem: any FileSystem = POSIXFileSystem(),
        id: @escaping (Int) -> RecordID, album: @escaping (Int) -> Int
    ) throws(FileSystemError) {
        self.layout = layout
        self.source = source
        self.count = count
        pages = Gallery.pageCount(count)
        self.sync = sync
        self.fileSystem = fileSystem
        self.id = id
        self.album = album
        let directory = layout.pages.path
        if mkdir(directory, 0o755) != 0, errno != EEXIST { throw FileSystemError(.create, path: directory, errno: errno) }
        let found = BundleLayout.fileKind(atPath: directory)
        guard found == .directory else {
            // Something else is there: fail as opening it as a directory, never through a link, would.
            let code = found == .symbolicLink ? ELOOP : found == .missing ? ENOENT : ENOTDIR
            throw FileSystemError(.open, .directory, path: directory, errno: code)
        }
    }

    /// Adds the tile of the item at index `next` to its page, opening the page or its album's
    /// section first if the item is their first; a full page is sealed.
    func add(_ item: Manifest.Item) {
        let index = next
        let perPage = Gallery.itemsPerPage
        if index % perPage == 0 { beginPage(index / perPage + 1) }
        if let group, index < group.end {
            if sectionOpen == nil { openSection(continued: true) }
        } else {
            closeSection()
            group = run(from: index)
            openSection(continued: false)
            coveredRun = covers.count < Gallery.coveredGroups
            if coveredRun { covers.append((Int32(index), -1, 0)) }
        }
        html.itemTile(item)
        if coveredRun {
            if item.status == .done, covers[covers.count - 1].cover < 0 { covers[covers.count - 1].cover = Int32(index) }
            if item.status == .failed { covers[covers.count - 1].failed += 1 }
        }
        if item.status == .failed { failures[item.error?.kind ?? "unknown", default: []].append(Int32(index)) }
        next += 1
        if next % perPage == 0 || next == count {
            endFile(&page)
        } else {
            spill(&page)
        }
    }

    /// Writes the failures pages and the front page, then, if `shouldCommit` says so, puts every
    /// page in place and removes stale ones; call it after the last `add`. `counts` are the
    /// items' statuses; `item` makes the item at an index again (for the failures pages).
    /// Returns whether the pages were put in place.
    @discardableResult
    func commit(
        counts: [ItemRecord.Status: Int], item: (Int) -> Manifest.Item, if shouldCommit: () -> Bool = { true }
    ) throws(FileSystemError) -> Bool {
        precondition(next == count, "every item is added before the gallery is committed")
        defer { sealed.removeAll() }  // whatever was not committed is discarded with its writer
        if let failure { throw failure }
        let failed = writeFailures(item: item)
        writeFrontPage(counts: counts, item: item)
        if let failure { throw failure }
        guard shouldCommit() else { return false }
        for file in sealed { try file.commit() }
        removeStalePages(keeping: Set(Gallery.pageNames(items: count, failed: failed)))
        return true
    }

    /// Starts a new file for a page in `pages/`, with `title` and the links at its top (and
    /// bottom), then `extra` in the header and `end` after the footer.
    func beginFile(
        _ name: String, title: String, header: String, navigation: String, extra: String = "", end: String = ""
    ) -> AtomicFileWriter? {
        self.navigation = navigation
        pageEnd = end
        html.head(title: title, header: header + navigation + extra)
        return create(layout.pages.appendingPathComponent(name).path)
    }

    func create(_ path: String) -> AtomicFileWriter? {
        do {
            return try AtomicFileWriter(path: path, sync: sync, fileSystem: fileSystem)
        } catch {
            if failure == nil { failure = error }
            return nil
        }
    }

    /// Hands what is made to `file` once it passes 64 KiB, so no page is held whole in memory.
    func spill(_ file: inout AtomicFileWriter?) {
        guard html.bytes.count >= 1 << 16 else { return }
        file?.append(html.bytes)
        html.bytes.removeAll(keepingCapacity: true)
    }

    /// Ends the page with the links it began with, and seals its file.
    func endFile(_ file: inout AtomicFileWriter?) {
        closeSection()
        html.tail(footer: navigation, end: pageEnd)
        seal(&file)
    }

    /// Writes what is made to `file`, seals it for `commit`, and forgets it.
    func seal(_ file: inout AtomicFileWriter?) {
        defer { html.bytes.removeAll(keepingCapacity: true) }
        guard let writer = file else { return }
        file = nil
        writer.append(html.bytes)
        do {
            try writer.seal()
            sealed.append(writer)
        } catch {
            if failure == nil { failure = error }
        }
    }

    func closeSection() {
        if let close = sectionOpen { html.add(close + "\n</section>\n") }
        sectionOpen = nil
    }

    private func beginPage(_ number: Int) {
        let first = (number - 1) * Gallery.itemsPerPage
        let last = min(count, first + Gallery.itemsPerPage) - 1
        page = beginFile(
            Gallery.pageName(number, of: pages), title: "Archived images, page \(number) of \(pages)",
            header: "<p>Items \(first + 1) to \(last + 1) of \(count), #\(shown(first)) to #\(shown(last)), in id order.</p>\n",
            navigation: Gallery.HTMLText.navigation(number: number, count: pages) { Gallery.pageName($0, of: self.pages) },
            extra: Gallery.searchBox, end: Gallery.itemPageEnd)
    }

    /// The album's heading; on a page the album started on an earlier one, marked as continued.
    private func openSection(continued: Bool) {
        guard let group else { return }
        html.add(continued ? "<section class=\"album\">\n" : "<section class=\"album\" id=\"group-\(anchor(group.start))\">\n")
        html.add("<h2>Album \(group.album) <small>(\(continued ? "continued, " : "")")
        html.add("\(Gallery.items(group.end - group.start)) from #\(shown(group.start)))</small></h2>\n<ul class=\"grid\">\n")
        sectionOpen = "</ul>"
    }

    /// The id of the item at `index`, escaped, as a page shows it.
    func shown(_ index: Int) -> String {
        Gallery.shown(id(index))
    }

    /// The anchor name of the item at `index` (after `item-` or `group-`).
    func anchor(_ index: Int) -> String {
        Gallery.anchor(id(index))
    }

    /// The run of consecutive items in the album of the item at `start`.
    func run(from start: Int) -> (album: Int, start: Int, end: Int) {
        let album = album(start)
        var end = start + 1
        while end < count, self.album(end) == album { end += 1 }
        return (album, start, end)
    }

    /// Removes the files in `pages/` named like pages that `keeping` does not hold: what an
    /// earlier gallery with more items or failures left.
    private func removeStalePages(keeping: Set<String>) {
        let directory = layout.pages.path
        OpenDirectory(path: directory, followingLink: false)?.forEachName { name in
            if Gallery.isPageName(name), !keeping.contains(name) { unlink(directory + "/" + name) }
        }
    }
}
