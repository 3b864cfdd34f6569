import XCTest
@testable import ArchiverCore

/// `ShardDigest.Copies`: the files merge copied, found by name whatever order they came in.
final class ShardDigestTests: XCTestCase {
    private func copied(_ bytes: Int64) -> Result<ImageCopier.Copied, ItemError> {
        .success(ImageCopier.Copied(bytes: bytes, sha256: SHA256Digest(hex: String(repeating: "0", count: 64))!))
    }

    private func bytes(_ result: Result<ImageCopier.Copied, ItemError>?) -> Int64? {
        if case .success(let copy)? = result { return copy.bytes }
        return nil
    }

    func testNamesInOrderOrNotAreFoundTakenOnceAndTheRestListed() {
        for names in [["1.png", "10.png", "2.png", "é.png"], ["2.png", "é.png", "1.png", "10.png"]] {
            var copies = ShardDigest.Copies()
            for (size, name) in names.enumerated() {
                XCTAssertFalse(copies.contains(name), name)
                copies.add(name, copied(Int64(size)))
                XCTAssertTrue(copies.contains(name), name)
            }
            copies.add("bad.png", .failure(.io("a symbolic link")))
            XCTAssertTrue(copies.contains("bad.png"))
            XCTAssertFalse(copies.contains("3.png"))
            XCTAssertEqual(bytes(copies.take("10.png")), Int64(names.firstIndex(of: "10.png")!))
            XCTAssertNil(copies.take("10.png"), "taken once")
            XCTAssertNil(copies.take("3.png"))
            XCTAssertEqual(bytes(copies.take("é.png")), Int64(names.firstIndex(of: "é.png")!))
            XCTAssertEqual(Set(copies.names), ["1.png", "2.png", "bad.png"], "\(names)")
            guard case .failure? = copies.take("bad.png") else { return XCTFail("the failure is kept") }
            XCTAssertEqual(Set(copies.names), ["1.png", "2.png"])
        }
    }
}
