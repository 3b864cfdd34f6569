/// `archiver --help`: the commands; each command's own help comes from its `CommandSpec`.
let usage = """
    archiver: archive a catalog of image URLs into a verified offline bundle

    usage:
      \(RunCommand.spec.synopsis)
      \(ServeCommand.spec.synopsis)
      \(StatusCommand.spec.synopsis)
      \(PackCommand.spec.synopsis)
      \(VerifyCommand.spec.synopsis)
      \(MergeCommand.spec.synopsis)
      \(CompletionsCommand.spec.synopsis)
      \(ManCommand.spec.synopsis)
      archiver help COMMAND      (or archiver COMMAND --help): the command's options
      archiver --version
    """

/// A command's reference (its help, man page section and completions) and its entry point.
struct Command: Sendable {
    let reference: CommandReference
    /// Made only when asked for: every run would otherwise lay out every command's help first.
    private let makeHelp: @Sendable () -> String
    let main: @Sendable ([String]) -> Int32

    init(reference: CommandReference, help: @escaping @Sendable () -> String, main: @escaping @Sendable ([String]) -> Int32) {
        self.reference = reference
        makeHelp = help
        self.main = main
    }

    var name: String { reference.name }
    var help: String { makeHelp() }
}

extension CommandSpec {
    func command(_ main: @escaping @Sendable ([String]) -> Int32) -> Command {
        Command(reference: reference, help: { help }, main: main)
    }
}

/// Every command, by name: what the dispatcher, the man page and the completions walk.
let commands: [Command] = [
    RunCommand.spec.command(RunCommand.main),
    ServeCommand.spec.command(ServeCommand.main),
    StatusCommand.spec.command(StatusCommand.main),
    PackCommand.spec.command(PackCommand.main),
    VerifyCommand.spec.command(VerifyCommand.main),
    MergeCommand.spec.command(MergeCommand.main),
    CompletionsCommand.spec.command(CompletionsCommand.main),
    ManCommand.spec.command(ManCommand.main),
]
