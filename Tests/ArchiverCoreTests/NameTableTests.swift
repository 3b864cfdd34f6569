import XCTest
@testable import ArchiverCore

final class NameTableTests: XCTestCase {
    private func table(_ names: [String]) -> NameTable {
        var table = NameTable()
        for name in names { table.append(Substring(name)) }
        table.sort()
        return table
    }

    private func names(of table: NameTable) -> [String] {
        (0..<table.count).map { table[$0] }
    }

    func testNamesSortByTheirBytesNotAsNumbersOrCharactersAndRepeatsGo() {
        // "é" precomposed (C3 A9) sorts after "z"; "e" with a combining accent sorts after "e.png".
        let sorted = names(of: table(["9.png", "10.png", "1.png", "\u{e9}.png", "e\u{301}.png", "z.png", "Z.png", "10.png", "", "1.png"]))
        XCTAssertEqual(sorted, ["", "1.png", "10.png", "9.png", "Z.png", "e\u{301}.png", "z.png", "\u{e9}.png"])
    }

    func testLookUpFindsEveryNameWithOrWithoutAHintAndNothingElse() {
        var generator = SeededGenerator()
        let alphabet = Array("0123456789.png\u{e9}/")
        let added = (0..<2000).map { _ in String((0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }) }
        let table = table(added)
        let expected = Set(added).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        XCTAssertEqual(names(of: table), expected)
        for (index, name) in expected.enumerated() {
            XCTAssertEqual(table.index(of: Substring(name)), index, name)
            XCTAssertEqual(table.index(of: Substring(name), hint: index), index, name)
            XCTAssertEqual(table.index(of: Substring(name), hint: (index + 7) % expected.count), index, "a wrong hint: \(name)")
        }
        for absent in ["x", "0123456789", "png.", "\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}"] {
            XCTAssertNil(table.index(of: Substring(absent), hint: 0), absent)
        }
        XCTAssertNil(NameTable().index(of: "1.png", hint: 0))
    }

    func testComparingAcrossTablesIsByteOrder() {
        let left = table(["1.png", "10.png", "2.png"])
        let right = table(["10.png", "1.png", "3.png"])
        XCTAssertEqual((0..<3).map { left.compare($0, with: $0, of: right).signum() }, [0, 0, -1])
        XCTAssertLessThan(left.compare(0, with: 1, of: right), 0, "1.png before 10.png: a prefix first")
        XCTAssertGreaterThan(left.compare(2, with: 1, of: right), 0)
    }

    /// A table past its capacity refuses the name (the callers turn that into a one-line error)
    /// instead of trapping, and keeps what it had.
    func testATableRefusesANameThatWouldPassItsCapacity() {
        var table = NameTable(capacity: 12)
        XCTAssertTrue(table.append(Substring("1.png")))
        XCTAssertTrue(table.append(Substring("22.png")))
        XCTAssertFalse(table.append(Substring("3.png")), "5 + 6 + 5 bytes pass 12")
        XCTAssertTrue(table.append(Substring("4")))
        table.sort()
        XCTAssertEqual(names(of: table), ["1.png", "22.png", "4"])
    }
}
