import ArchiverCore
import Foundation

/// `archiver verify DIR|FILE.tar.gz [--json]`: checks every done item against the manifest.
enum VerifyCommand {
    static func main(_ arguments: [String]) -> Int32 {
        var json = false
        var parser = Arguments(arguments)
        do {
            try parser.parse { name, _ in
                guard name == "--json" else { throw unknownOption(name, command: "verify") }
                json = true
            }
            guard parser.positionals.count == 1 else {
                throw UsageError(description: "verify takes one bundle directory or .tar.gz, e.g. 'archiver verify archive'")
            }
        } catch {
            return fail("\(error)")
        }
        let report: VerificationReport
        do {
            report = try BundleVerifier().verify(URL(fileURLWithPath: parser.positionals[0]))
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
            print(report.summary)
        }
        return report.ok ? 0 : 1
    }
}
