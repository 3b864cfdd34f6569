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
        func untaken(_ copies: ShardDigest.Copies) -> Set<String> {
            var names = Set<String>()
            copies.forEachUntaken { names.insert($0) }
            return names
        }
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
            XCTAssertEqual(untaken(copies), ["1.png", "2.png", "bad.png"], "\(names)")
            guard case .failure? = copies.take("bad.png") else { return XCTFail("the failure is kept") }
            XCTAssertEqual(untaken(copies), ["1.png", "2.png"])
        }
    }

    /// A done item of a shard's manifest as `run` writes it, claiming `bytes`.
    private func done(_ id: Int, bytes: Int64?) -> Manifest.Item {
        Manifest.Item(
            id: RecordID(id), albumId: 1, title: "t", url: "u", source: "u", status: .done, path: "images/\(id).png", format: .png,
            bytes: bytes, attempts: 1)
    }

    /// A sparse file in a shard's images/ may claim exabytes: merge used to copy its zeros until
    /// the disk was full. One larger than any run keeps (2^40 bytes) is refused before a byte is
    /// read, and nothing is left under its name; a small one still copies.
    func testAFileLargerThanAnyRunKeepsIsNotCopied() throws {
        let memory = try Fixtures.memoryDirectory(self)
        let huge = memory.appendingPathComponent("huge.png")
        try Fixtures.sparseFile(huge, size: RunConfiguration.largestMaxBytes + 1)
        try Data("png".utf8).write(to: memory.appendingPathComponent("small.png"))
        let out = memory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        let copier = try ImageCopier(directory: out.path)
        guard case .failure(let error) = copier.copy(file: huge.path, to: "huge.png") else { return XCTFail("copied") }
        XCTAssertEqual(error, ImageCopier.tooLarge)
        XCTAssertEqual(copier.bytes, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.appendingPathComponent("huge.png").path))
        guard case .success(let copied) = copier.copy(file: memory.appendingPathComponent("small.png").path, to: "small.png") else {
            return XCTFail("the small file was not copied")
        }
        XCTAssertEqual(copied.bytes, 3)
    }

    /// Two done items claiming 2^63 - 1 bytes each used to overflow the digest's sum and kill
    /// `merge` (SIGILL) before their sizes were checked. A size no run can keep (below 0 or over
    /// 2^40, the most --max-bytes allows) is now damage to the shard, and left out of the sum.
    func testDoneItemsClaimingImpossibleSizesAreDamageNotATrap() {
        var copies = ShardDigest.Copies()
        for id in 1...4 { copies.add("\(id).png", copied(10)) }
        var digest = ShardDigest(name: "shard 1/1 (s1)", shard: nil, copies: copies)
        for (id, bytes) in [(1, Int64.max), (2, .max), (3, -1), (4, 10)] {
            digest.add(done(id, bytes: bytes))
        }
        digest.finish(unexpected: Sample(keeping: ShardDigest.named))
        XCTAssertEqual(digest.done, 4)
        XCTAssertEqual(digest.bytes, 10, "only the possible size is added")
        XCTAssertEqual(
            digest.damage,
            [
                "shard 1/1 (s1): 1: impossible size: manifest says 9223372036854775807 bytes, where a done file has 0 to 1099511627775 (images/1.png)",
                "shard 1/1 (s1): 2: impossible size: manifest says 9223372036854775807 bytes, where a done file has 0 to 1099511627775 (images/2.png)",
                "shard 1/1 (s1): 3: impossible size: manifest says -1 bytes, where a done file has 0 to 1099511627775 (images/3.png)",
            ], "each bad item is one line, its file taken (not also an unexpected file)")
    }
}
