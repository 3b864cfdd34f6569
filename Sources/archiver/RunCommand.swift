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
            case "--per-host": config.perHost = try args.integer(for: name, in: RunConfiguration.concurrencyRange)
            case "--cacert": config.caFile = try caFile(try args.value(for: name))
            case "--http2": config.http2 = true
            case "--field": config.field = try args.choice(for: name, as: ImageField.self)
            case "--shard":
                let text = try args.value(for: name)
                guard let shard = Shard(text) else {
                    throw UsageError(description: "--shard takes I/N, one-based with 1 <= I <= N <= \(Shard.maxCount), e.g. 2/4, not '\(text)'")
                }
                config.shard = shard
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

    /// `--cacert`'s file, checked now so a typo fails the run at once instead of every item.
    static func caFile(_ path: String) throws -> String {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        guard let size, size <= 64 << 20, let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw UsageError(description: "--cacert: cannot read '\(path)'; give a PEM file of CA certificates")
        }
        guard text.contains("-----BEGIN CERTIFICATE-----") else {
            throw UsageError(description: "--cacert: '\(path)' holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return path
    }

    static func main(_ arguments: [String]) -> Int32 {
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            return fail("\(error)")
        }
        let config = options.configuration
        do {
            // Before the fetcher sizes its connection pool to the limit.
            try OpenFileLimit.raise(for: config.concurrency)
        } catch {
            return fail(error.description)
        }
        let fetcher = CurlFetcher(limits: FetchLimits(config), caFile: config.caFile, http2: config.http2)
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
