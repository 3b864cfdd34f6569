import ArchiverCore
import CArchiverBuild
import Foundation

// A closed stderr or stdout pipe (`archiver run 2>&1 | head`) must not kill a run mid-write.
signal(SIGPIPE, SIG_IGN)
let arguments = Array(CommandLine.arguments.dropFirst())
let names = commands.map(\.name).joined(separator: ", ")
let status: Int32
switch arguments.first {
case "--version":
    print("archiver \(ArchiverVersion.current) (commit \(String(cString: carchiver_build_commit())))")
    status = 0
case "help", "--help", "-h":
    if arguments.first == "help", let name = arguments.dropFirst().first {
        if let command = commands.first(where: { $0.name == name }) {
            print(command.help)
            status = 0
        } else {
            status = fail("unknown command '\(name)'; the commands are \(names)")
        }
    } else {
        print(usage)
        status = 0
    }
case let name? where commands.contains { $0.name == name }:
    let command = commands.first { $0.name == name }!
    let rest = Array(arguments.dropFirst())
    if rest.contains("--help") || rest.contains("-h") {
        print(command.help)
        status = 0
    } else {
        status = command.main(rest)
    }
case nil:
    status = fail("no command given; see 'archiver --help'")
case let other?:
    status = fail("unknown command '\(other)'; the commands are \(names) (see 'archiver --help')")
}
exit(status)
