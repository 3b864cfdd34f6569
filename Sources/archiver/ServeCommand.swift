import ArchiverServer
import ArchiverCore
import Dispatch
import Foundation

/// `archiver serve`: the loopback stand-in for via.placeholder.com, answering `/<size>/<colour>`
/// with a PNG of that size and colour, until SIGINT or SIGTERM.
enum ServeCommand {
    struct Options {
        var host = "127.0.0.1"
        var port = 0
        var faults = false
    }

    static let spec = CommandSpec<Options>(
        name: "serve", synopsis: "archiver serve [--host 127.0.0.1] [--port N] [--faults]",
        summary: "Answers /<size>/<colour> with a PNG of that size and colour, as via.placeholder.com did, until Ctrl-C.",
        options: [
            .text("--host", "ADDRESS", default: "127.0.0.1", "the IPv4 address to listen on") { $0.host = $1 },
            .integer("--port", in: 0...65535, default: "0", "the port (0 picks a free one)") { $0.port = $1 },
            .flag("--faults", "also serve /fault/<name>/<key> paths that misbehave on purpose") { $0.faults = true },
        ])

    static func main(_ arguments: [String]) -> Int32 {
        var options = Options()
        do {
            if let extra = try spec.parse(arguments, into: &options).first {
                throw UsageError(description: "unexpected argument '\(extra)' for 'archiver serve'")
            }
        } catch {
            return fail("\(error)")
        }
        let (host, port, faults) = (options.host, options.port, options.faults)
        let images = PlaceholderImages { size, red, green, blue in
            PNGEncoder.solid(width: size, height: size, red: red, green: green, blue: blue)
        }
        let server: HTTPServer
        do {
            let faultRoutes = faults ? FaultRoutes(image: PNGEncoder.solid(width: 600, height: 600, red: 0x92, green: 0xC9, blue: 0x52)) : nil
            server = try HTTPServer(host: host, port: UInt16(port)) { request in
                faultRoutes?.respond(to: request) ?? images.respond(to: request)
            }
        } catch {
            return fail("cannot serve: \(error)")
        }
        let stopped = DispatchSemaphore(value: 0)
        let interruption = Interruption { stopped.signal() }
        server.start()
        var banner = "serving placeholder images at \(server.baseURL)/<size>/<colour> (Ctrl-C to stop)\n"
        if faults {
            banner += FaultRoutes.catalog.map { "  \(server.baseURL)/fault/\($0.name)/<key>  \($0.behaviour)\n" }.joined()
        }
        try? FileHandle.standardOutput.write(contentsOf: Data(banner.utf8))
        stopped.wait()
        server.stop()
        withExtendedLifetime(interruption) {}
        return 0
    }
}
