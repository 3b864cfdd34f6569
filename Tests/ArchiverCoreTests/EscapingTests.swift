import Foundation
import XCTest

@testable import ArchiverCore

/// The two escapers every item passes through, held to what reads their output back.
final class EscapingTests: XCTestCase {
    private static let pieces = ["a", "é", "🎞", "\"", "\\", "/", "<", ">", "&", "'", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", " ", "?", "~", "@"]

    private func randomTexts() -> [String] {
        var generator = SeededGenerator()
        var texts = ["", "plain", String(repeating: "x", count: 300)]
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<Int.random(in: 1...12, using: &generator) { text += Self.pieces.randomElement(using: &generator)! }
            texts.append(text)
        }
        return texts
    }

    func testJSONStringsReadBackAsWritten() throws {
        for text in randomTexts() {
            var bytes: [UInt8] = []
            JSONText.string(text, into: &bytes)
            let read = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) as? String
            XCTAssertEqual(read.map(Array.init), Array(text), text.debugDescription)
            XCTAssertFalse(bytes.dropFirst().dropLast().contains { $0 < 0x20 }, "a control character went out raw")
        }
    }

    func testHTMLTextHasNoMarkupCharacterLeftAndUnescapesToTheText() {
        for text in randomTexts() {
            var html = Gallery.HTMLText()
            html.escaped(text)
            XCTAssertFalse(html.bytes.contains { [0x3C, 0x3E, 0x22, 0x27].contains($0) }, text.debugDescription)
            let back = String(decoding: html.bytes, as: UTF8.self)
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&amp;", with: "&")
            XCTAssertEqual(Array(back.utf8), Array(text.utf8), text.debugDescription)
        }
    }
}
