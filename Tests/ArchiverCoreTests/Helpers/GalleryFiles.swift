import Foundation
import XCTest
@testable import ArchiverCore

/// The gallery's files as a bundle holds them: `index.html` and every file in `pages/`.
enum GalleryFiles {
    /// The files by path (`index.html`, `pages/0001.html`, ...), as text.
    static func read(_ root: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        let index = root.appendingPathComponent("index.html")
        if FileManager.default.fileExists(atPath: index.path) {
            files["index.html"] = try String(contentsOf: index, encoding: .utf8)
        }
        let pages = root.appendingPathComponent("pages")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: pages.path)) ?? [] {
            files["pages/" + name] = try String(contentsOf: pages.appendingPathComponent(name), encoding: .utf8)
        }
        return files
    }

    /// What `Gallery.write(for:in:)` makes of `manifest`, written in a fresh directory.
    static func expected(for manifest: Manifest) throws -> [String: String] {
        let root = try BundleFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Gallery.write(for: manifest, in: BundleLayout(root: root))
        return try read(root)
    }

    /// The relative links of a page (`href="..."`, not http(s)), resolved against `path`.
    static func links(in html: String, from path: String) -> [(file: String, fragment: String?)] {
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : ""
        return html.matches(of: /href="([^"]*)"/).compactMap { match in
            let href = String(match.output.1)
            guard !href.hasPrefix("http://"), !href.hasPrefix("https://") else { return nil }
            let parts = href.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            var components = (directory.isEmpty ? [] : [directory]) + [parts[0]]
            components = components.joined(separator: "/").split(separator: "/").map(String.init)
            var resolved: [String] = []
            for component in components {
                if component == ".." { resolved.removeLast() } else if component != "." { resolved.append(component) }
            }
            let file = parts[0].isEmpty ? path : resolved.joined(separator: "/")
            return (file, parts.count > 1 ? parts[1] : nil)
        }
    }

    /// Every file reached from `index.html` by following links, breadth first.
    static func reachable(in files: [String: String]) -> Set<String> {
        var seen: Set<String> = ["index.html"]
        var queue = ["index.html"]
        while let path = queue.popLast() {
            guard let html = files[path] else { continue }
            for (file, _) in links(in: html, from: path) where !seen.contains(file) {
                seen.insert(file)
                queue.append(file)
            }
        }
        return seen
    }

    /// How many times `needle` occurs in `text`.
    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }
}
