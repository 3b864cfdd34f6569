/// `archiver completions bash|zsh|fish`: the shell's completion script, from the option table.
enum CompletionsCommand {
    static let spec = CommandSpec<Void>(
        name: "completions", synopsis: "archiver completions bash|zsh|fish",
        summary: """
            Prints the completion script for the shell, written from the same option table as the parser
            and help. The .deb installs all three; by hand: source <(archiver completions bash).
            """,
        options: [], operands: .choices(Shell.allCases.map(\.rawValue)))

    static func main(_ arguments: [String]) -> Int32 {
        var none: Void = ()
        do {
            let positionals = try spec.parse(arguments, into: &none)
            guard positionals.count == 1, let shell = Shell(rawValue: positionals[0]) else {
                throw UsageError(description: "completions takes one shell: bash, zsh or fish, e.g. 'archiver completions bash'")
            }
            print(shell.script(for: commands.map(\.reference)), terminator: "")
            return 0
        } catch {
            return fail("\(error)")
        }
    }
}
