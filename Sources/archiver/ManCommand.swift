/// `archiver man`: the roff man page archiver(1), from the option table (`make deb` installs it).
enum ManCommand {
    static let spec = CommandSpec<Void>(
        name: "man", synopsis: "archiver man",
        summary: """
            Prints the man page archiver(1) in roff, written from the same option table as the parser and
            help: archiver man | man -l -
            """,
        options: [])

    static func main(_ arguments: [String]) -> Int32 {
        var none: Void = ()
        do {
            if let extra = try spec.parse(arguments, into: &none).first {
                throw UsageError(description: "unexpected argument '\(extra)' for 'archiver man'")
            }
        } catch {
            return fail("\(error)")
        }
        print(ManPage.roff(for: commands.map(\.reference)), terminator: "")
        return 0
    }
}
