import Foundation
import XCTest
@testable import ArchiverCore

final class CatalogTests: XCTestCase {
    private func fast(_ text: String) -> [CatalogRecord]? {
        Data(text.utf8).withUnsafeBytes { CatalogParser.records(in: $0.bindMemory(to: UInt8.self)) }
    }

    func testTheFastParserReadsTheRealCatalogExactlyAsJSONDecoderDoes() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/photos.json")
        let data = try Data(contentsOf: url)
        let parsed = try XCTUnwrap(data.withUnsafeBytes { CatalogParser.records(in: $0.bindMemory(to: UInt8.self)) })
        XCTAssertEqual(parsed.count, 5000)
        XCTAssertEqual(parsed, try JSONDecoder().decode([CatalogRecord].self, from: data))
    }

    func testEscapesUnicodeUnknownFieldsAndSpacingMatchJSONDecoder() throws {
        let text = """
             [ {"extra": {"nested": [1, 2.5e3, "x\\"y", null, true, {}]}, "albumId": -3, "id" : 7,
               "title": "tab\\t quote\\" slash\\/ back\\\\ \\u00e9 \\ud83c\\udf9e \\n end",
               "url": "https://h/7", "thumbnailUrl": "", "more": false},
              {"albumId":1,"id":8,"title":"é 🎞 plain","url":"u","thumbnailUrl":"t"} ]\u{20}
            """
        let parsed = try XCTUnwrap(fast(text))
        XCTAssertEqual(parsed, try JSONDecoder().decode([CatalogRecord].self, from: Data(text.utf8)))
        XCTAssertEqual(parsed[0].title, "tab\t quote\" slash/ back\\ é 🎞 \n end")
        XCTAssertEqual(fast("[]"), [])
    }

    func testAnythingUnexpectedIsLeftToJSONDecoderForItsMessage() throws {
        let record = #"{"albumId": 1, "id": 1, "title": "t", "url": "u", "thumbnailUrl": "v"}"#
        for text in [
            "[" + record, "[" + record + ",]", "[" + record + "] x", "{}", "",
            #"[{"albumId": 1, "id": 1.5, "title": "t", "url": "u", "thumbnailUrl": "v"}]"#,
            #"[{"albumId": 1, "id": "1", "title": "t", "url": "u", "thumbnailUrl": "v"}]"#,
            #"[{"albumId": 1, "title": "t", "url": "u", "thumbnailUrl": "v"}]"#,
            #"[{"albumId": 1, "id": 1, "title": "bad \q escape", "url": "u", "thumbnailUrl": "v"}]"#,
            #"[{"albumId": 1, "id": 1, "title": "lone \ud800 surrogate", "url": "u", "thumbnailUrl": "v"}]"#,
            #"[{"albumId": 1, "id": 99999999999999999999, "title": "t", "url": "u", "thumbnailUrl": "v"}]"#,
        ] {
            XCTAssertNil(fast(text), text)
        }
        XCTAssertThrowsError(try Catalog(source: "c.json", data: Data(("[" + record + ",\n {\"id\": }]").utf8))) { error in
            XCTAssertTrue("\(error)".contains("line 2"), "\(error)")
        }
    }
}
