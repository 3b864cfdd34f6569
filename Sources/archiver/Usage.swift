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
      archiver help COMMAND      (or archiver COMMAND --help): the command's options
      archiver --version
    """

/// Each command's help and entry point, by name.
let commands: [(name: String, help: String, main: @Sendable ([String]) -> Int32)] = [
    ("run", RunCommand.spec.help, RunCommand.main),
    ("serve", ServeCommand.spec.help, ServeCommand.main),
    ("status", StatusCommand.spec.help, StatusCommand.main),
    ("pack", PackCommand.spec.help, PackCommand.main),
    ("verify", VerifyCommand.spec.help, VerifyCommand.main),
    ("merge", MergeCommand.spec.help, MergeCommand.main),
]
