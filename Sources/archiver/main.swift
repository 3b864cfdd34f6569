import ArchiverCore
import Foundation

// A closed stderr or stdout pipe (`archiver run 2>&1 | head`) must not kill a run mid-write.
signal(SIGPIPE, SIG_IGN)
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
switch arguments.first {
case _ where arguments.contains("--help") || arguments.contains("-h"):
    print(usage)
    status = 0
case "run": status = RunCommand.main(Array(arguments.dropFirst()))
case "status": status = StatusCommand.main(Array(arguments.dropFirst()))
case "serve": status = ServeCommand.main(Array(arguments.dropFirst()))
case "pack": status = PackCommand.main(Array(arguments.dropFirst()))
case "verify": status = VerifyCommand.main(Array(arguments.dropFirst()))
case "merge": status = MergeCommand.main(Array(arguments.dropFirst()))
case "help":
    print(usage)
    status = 0
case "--version":
    print("archiver \(ArchiverVersion.current)")
    status = 0
case nil:
    status = fail("no command given; see 'archiver --help'")
case let other?:
    status = fail("unknown command '\(other)'; the commands are run, serve, status, pack, verify, merge (see 'archiver --help')")
}
exit(status)
