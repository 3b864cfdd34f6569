import ArchiverCore
import Foundation

/// `archiver status [DIR] [--json]`: what a bundle holds, from its journal.
enum StatusCommand {
    static func main(_ arguments: [String]) -> Int32 {
        var json = false
        var parser = Arguments(arguments)
        do {
            try parser.parse { name, _ in
                guard name == "--json" else { throw unknownOption(name, command: "status") }
                json = true
            }
            guard parser.positionals.count <= 1 else {
                throw UsageError(description: "status takes one directory, not \(parser.positionals.count)")
            }
        } catch {
            return fail("\(error)")
        }
        let directory = parser.positionals.first ?? "archive"
        guard let status = BundleStatus.read(directory: URL(fileURLWithPath: directory)) else {
            return fail("\(directory) holds no archiver bundle (no .archiver/ inside)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            print(String(decoding: (try? encoder.encode(status)) ?? Data(), as: UTF8.self))
        } else {
            print(status.text)
        }
        return 0
    }
}
