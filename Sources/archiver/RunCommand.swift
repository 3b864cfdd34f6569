import ArchiverCore
import Dispatch
import Foundation

/// `archiver run`: parse options, load the catalog, run the pipeline, print, exit.
enum RunCommand {
    struct Options {
        var configuration = RunConfiguration()
        var quiet = false
        var json = false
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var config = RunConfiguration()
        var mirrors: [(from: String, to: String)] = []
        var parser = Arguments(arguments)
        try parser.parse { name, args in
            switch name {
            case "--catalog": config.catalogSource = try args.value(for: name)
            case "--out": config.outputDirectory = URL(fileURLWithPath: try args.value(for: name))
            case "--concurrency": config.concurrency = try args.integer(for: name, in: RunConfiguration.concurrencyRange)
            case "--field": config.field = try args.choice(for: name, as: ImageField.self)
            case "--mirror":
                let text = try args.value(for: name)
                guard let rule = MirrorMap.parseRule(text) else {
                    throw UsageError(description: "--mirror takes FROM=TO, e.g. https://via.placeholder.com=http://127.0.0.1:8080, not '\(text)'")
                }
                mirrors.append(rule)
            case "--validate": config.validation = try args.choice(for: name, as: ValidationMode.self)
            case "--retries": config.retries = try args.integer(for: name, in: 0...10)
            case "--timeout": config.timeout = try args.number(for: name, in: 1...3600, unit: "seconds")
            case "--max-bytes": config.maxBytes = Int64(try args.integer(for: name, in: 1...(1 << 40)))
            case "--rate": config.rate = try args.number(for: name, in: 0.01...100_000, unit: "requests a second")
            case "--skip-failed": config.skipFailed = true
            case "--durable": config.durable = true
            case "--prune": config.prune = true
            case "--quiet", "-q": options.quiet = true
            case "--json": options.json = true
            default: throw unknownOption(name, command: "run")
            }
        }
        if let extra = parser.positionals.first {
            throw UsageError(description: "unexpected argument '\(extra)' for 'archiver run'; see 'archiver --help'")
        }
        config.mirrors = MirrorMap(mirrors)
        options.configuration = config
        return options
    }

    static func main(_ arguments: [String]) -> Int32 {
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            return fail("\(error)")
        }
        let config = options.configuration
        let fetcher = CurlFetcher(
            limits: FetchLimits(
                concurrency: config.concurrency, timeout: config.timeout, maxBytes: config.maxBytes,
                maxRedirects: config.maxRedirects))
        let catalog: Catalog
        do {
            catalog = try CatalogLoader.load(config.catalogSource, fetcher: fetcher)
        } catch {
            return fail(error.description)
        }
        let archiver = Archiver(configuration: config, fetcher: fetcher, log: { printError($0) })
        let interruption = Interruption { archiver.cancel() }
        let progress = options.quiet ? nil : ProgressPrinter(style: .standardError()) { archiver.progress }
        let summary: RunSummary
        do {
            summary = try archiver.run(catalog: catalog)
        } catch {
            progress?.stop()
            return fail(error.description)
        }
        progress?.stop()
        if !options.quiet || summary.failed > 0 || summary.interrupted {
            printError(ProgressLine.closing(summary))
        }
        var status: Int32 = summary.failed > 0 ? 1 : 0
        if let signal = interruption.received {
            printError("interrupted: \(summary.pending) items not fetched yet; run the same command again to resume")
            status = 128 + signal
        }
        if options.json {
            try? FileHandle.standardOutput.write(contentsOf: RunReport(summary: summary, exitStatus: status).json())
        }
        return status
    }
}

/// Turns SIGINT and SIGTERM into a clean cancel; a second signal exits at once (the journal
/// is consistent at every instant, so nothing is lost but the items in flight).
final class Interruption: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []
    private let lock = NSLock()
    private var signalNumber: Int32?

    init(onSignal: @escaping @Sendable () -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                let first: Bool = lock.withLock {
                    defer { signalNumber = signalNumber ?? number }
                    return signalNumber == nil
                }
                // _exit: other threads may be writing; the journal is consistent at every instant.
                if first { onSignal() } else { _exit(128 + number) }
            }
            source.resume()
            sources.append(source)
        }
    }

    var received: Int32? { lock.withLock { signalNumber } }
}
