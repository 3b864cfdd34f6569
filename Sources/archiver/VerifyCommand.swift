import ArchiverCore
import Foundation

/// `archiver verify DIR|FILE.tar.gz [--json]`: checks every done item against the manifest.
enum VerifyCommand {
    static let spec = CommandSpec<Bool>(
        name: "verify", synopsis: "archiver verify DIR|FILE.tar.gz [--json]",
        summary: """
            Checks that every done item's file has the manifest's size and sha256 and is
            a sound PNG, JPEG, WebP or GIF of its dimensions, and that images/ holds nothing else; prints
            one line per problem (the first 1000 of bad items and of unexpected files; the rest are
            counted) and a summary.
            """,
        options: [.flag("--json", "print a report as JSON on stdout") { $0 = true }],
        notes: "exit status: 0 all good, 1 problems found, 2 unusable input", operands: .file)

    static func main(_ arguments: [String]) -> Int32 {
        var json = false
        let positionals: [String]
        do {
            positionals = try spec.parse(arguments, into: &json)
            guard positionals.count == 1 else {
                throw UsageError(description: "verify takes one bundle directory or .tar.gz, e.g. 'archiver verify archive'")
            }
        } catch {
            return fail("\(error)")
        }
        let report: VerificationReport
        do {
            report = try BundleVerifier().verify(URL(fileURLWithPath: positionals[0]))
        } catch {
            return fail(error.description)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            print(String(decoding: (try? encoder.encode(report)) ?? Data(), as: UTF8.self))
        } else {
            for problem in report.problems {
                print(problem.message)
            }
            for line in report.unnamed {
                print(line)
            }
            print(report.summary)
        }
        return report.ok ? 0 : 1
    }
}
