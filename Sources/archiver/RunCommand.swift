import ArchiverCore
import Dispatch
import Foundation

/// `archiver run`: parse options, load the catalog, run the pipeline, print, exit.
enum RunCommand {
    struct Options {
        var configuration = RunConfiguration()
        var mirrors: [(from: String, to: String)] = []
        var quiet = false
        var json = false
    }

    /// Every option of `run`, once: parsing, `archiver run --help` and the README's table come from here.
    static let spec = CommandSpec<Options>(
        name: "run",
        synopsis: "archiver run [--catalog PATH|URL] [--out DIR] [--concurrency N] [options]",
        summary: "Archives a catalog of image records into a verified bundle: DIR/images/<id>.png|.jpg|.webp|.gif, manifest.json, index.html.",
        options: [
            .text("--catalog", "PATH|URL|-", default: RunConfiguration.defaultCatalog,
                  "JSON array, JSON Lines, CSV or TSV of records; - reads standard input") { $0.configuration.catalogSource = $1 },
            .text("--format", "json|jsonl|csv|tsv", default: "detected", "the catalog's format, instead of detecting it") { options, text in
                guard let format = CatalogFormat(rawValue: text) else {
                    throw UsageError(description: "--format takes json, jsonl, csv or tsv, not '\(text)'")
                }
                options.configuration.catalog.format = format
            },
            .text("--records", "POINTER", "where the array of records is in a JSON document (JSON Pointer, e.g. /data)") { options, text in
                guard text.isEmpty || text.hasPrefix("/") else {
                    throw UsageError(description: "--records takes a JSON Pointer such as /data, not '\(text)'")
                }
                options.configuration.catalog.records = text
            },
            .text("--id", "KEY", default: "id", "the record key (or CSV column) of the id: an integer or a string") { options, text in
                options.configuration.catalog.idKey = text
            },
            .text("--title", "KEY", default: "title", "the key of the title the gallery shows (optional in a record)") { options, text in
                options.configuration.catalog.titleKey = text
            },
            .text("--group", "KEY", default: "albumId", "the key of the integer the gallery groups by (optional in a record)") { options, text in
                options.configuration.catalog.groupKey = text
            },
            .text("--sha256", "KEY", "the key (or CSV column) of each image's expected SHA-256 in hex; a body that differs fails as checksum-mismatch") { options, text in
                options.configuration.catalog.sha256Key = text
            },
            .text("--out", "DIR", default: "./archive", "the bundle directory") {
                $0.configuration.outputDirectory = URL(fileURLWithPath: $1)
            },
            .integer("--concurrency", in: RunConfiguration.concurrencyRange, default: "8", "most requests in flight") {
                $0.configuration.concurrency = $1
            },
            .integer("--per-host", in: RunConfiguration.concurrencyRange, "most requests and connections to one host") {
                $0.configuration.perHost = $1
            },
            .text("--cacert", "FILE", "also trust the CA certificates in this PEM file (as curl --cacert)") {
                $0.configuration.caFile = try caFile($1)
            },
            .flag("--http2", "offer HTTP/2 to HTTPS servers and multiplex on it") { $0.configuration.http2 = true },
            .text("--header", alias: "-H", "LINE|@FILE", "send this header with every request, the catalog's too (repeatable); @FILE: one a line") {
                $0.configuration.request.headers += try headers($1)
            },
            .text("--user-agent", alias: "-A", "STRING", default: "archiver/VERSION", "the User-Agent sent") { options, text in
                guard case .success = HeaderLine.parse("User-Agent: " + text) else {
                    throw UsageError(description: "--user-agent: a user agent holds no CR, LF or NUL")
                }
                options.configuration.request.userAgent = text
            },
            .flag("--netrc", "take credentials for each host from ~/.netrc") { $0.configuration.request.netrc = true },
            .text("--netrc-file", "FILE", "take credentials for each host from this netrc file") {
                $0.configuration.request.netrcFile = try readableFile($1, option: "--netrc-file")
            },
            .text("--cookie", alias: "-b", "FILE", "send the cookies of this Netscape cookies.txt to the hosts it names") {
                $0.configuration.request.cookieFile = try readableFile($1, option: "--cookie")
            },
            .text("--proxy", alias: "-x", "URL", "send every request through this proxy (http://, https://, socks5://)") {
                $0.configuration.request.proxy = try proxy($1)
            },
            .text("--noproxy", "LIST", "hosts reached without the proxy, comma-separated (* for all)") {
                $0.configuration.request.noProxy = $1
            },
            .text("--field", "KEY", default: "url", "the key of the image URL to archive (url, thumbnailUrl, image_url, ...)") { options, text in
                options.configuration.field = ImageField(rawValue: text)
            },
            .text("--shard", "I/N", "archive only shard I of N (one-based): the records whose URL hashes to it") { options, text in
                guard let shard = Shard(text) else {
                    throw UsageError(description: "--shard takes I/N, one-based with 1 <= I <= N <= \(Shard.maxCount), e.g. 2/4, not '\(text)'")
                }
                options.configuration.shard = shard
            },
            .text("--mirror", "FROM=TO", "fetch URLs starting with FROM from TO instead (repeatable)") { options, text in
                guard let rule = MirrorMap.parseRule(text) else {
                    throw UsageError(description: "--mirror takes FROM=TO, e.g. https://via.placeholder.com=http://127.0.0.1:8080, not '\(text)'")
                }
                options.mirrors.append(rule)
            },
            .choice("--validate", as: ValidationMode.self, default: .structure,
                    "image check: the format's whole structure, or also a full decode of every frame") {
                $0.configuration.validation = $1
            },
            .text("--accept", "LIST", default: "png,jpeg,webp,gif", "image formats to keep; others fail as unaccepted-format") { options, text in
                guard let accepted = AcceptedFormats(parsing: text) else {
                    throw UsageError(description: "--accept takes a comma-separated list of png, jpeg, webp, gif, not '\(text)'")
                }
                options.configuration.accepted = accepted
            },
            .integer("--retries", in: 0...10, default: "3", "extra attempts for retriable failures") { $0.configuration.retries = $1 },
            .number("--timeout", "SECONDS", in: 1...3600, unit: "seconds", default: "30", "per attempt, 1 to 3600") {
                $0.configuration.timeout = $1
            },
            .integer("--max-bytes", in: 1...Int(RunConfiguration.largestMaxBytes), default: "52428800", "largest image accepted") {
                $0.configuration.maxBytes = Int64($1)
            },
            .number("--rate", "R", in: 0.01...100_000, unit: "requests a second", "at most R requests a second") {
                $0.configuration.rate = $1
            },
            .flag("--skip-failed", "keep earlier failures instead of retrying them") { $0.configuration.skipFailed = true },
            .flag("--durable", "fsync every file and directory before recording it") { $0.configuration.durable = true },
            .flag("--prune", "delete files of records no longer in the catalog") { $0.configuration.prune = true },
            .flag("--recheck", "hash every done file on resume, not just check size, inode, mtime") {
                $0.configuration.recheck = true
            },
            .flag("--refresh", "revalidate every done item (If-None-Match / If-Modified-Since); keep 304s, replace what changed") {
                $0.configuration.refresh = true
            },
            .flag("--quiet", alias: "-q", "no progress on stderr, nor the resuming line") { $0.quiet = true },
            .flag("--json", "print a machine-readable summary on stdout") { $0.json = true },
        ],
        notes: """
            exit status: 0 all done, 1 some items failed, 2 usage, catalog or bundle error,
                         130 interrupted (SIGINT), 143 terminated (SIGTERM)
            """)

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        if let extra = try spec.parse(arguments, into: &options).first {
            throw UsageError(description: "unexpected argument '\(extra)' for 'archiver run'; see 'archiver run --help'")
        }
        // Passwords in URLs are taken out here and where records are read; only the fetcher puts them back.
        let passwords = URLPasswords()
        options.configuration.catalog.passwords = passwords
        options.configuration.catalogSource = passwords.redacting(options.configuration.catalogSource)
        options.configuration.mirrors = MirrorMap(options.mirrors.map { (passwords.redacting($0.from), passwords.redacting($0.to)) })
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
        // Bodies over 1 MiB are spooled to unnamed files in images/ (the run makes it before the
        // first image request; the catalog, fetched before, stays in memory).
        let fetcher = CurlFetcher(
            limits: FetchLimits(config), caFile: config.caFile, http2: config.http2, spoolDirectory: config.spoolDirectory,
            request: config.request, passwords: config.catalog.passwords)
        let catalog: Catalog
        do {
            // Before `--catalog -` keeps its copy in the directory.
            try BundleLayout(root: config.outputDirectory).refuseForeignDirectory()
            catalog = try CatalogLoader.load(
                config.catalogSource, fetcher: fetcher, options: config.catalog,
                keepStandardInputAt: BundleLayout(root: config.outputDirectory).standardInputCatalog)
        } catch {
            return fail("\(error)")
        }
        let quiet = options.quiet
        // A line said mid-run (a host is down) first clears the live progress line it would end.
        let clear = isatty(STDERR_FILENO) == 1 ? "\r\u{1B}[2K" : ""
        let archiver = Archiver(configuration: config, fetcher: fetcher, log: { if !quiet { printError(clear + $0) } })
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
        var status: Int32 = summary.failed > 0 || summary.progress.refreshFailed > 0 ? 1 : 0
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
///
/// A second signal within `sameStop` of the first is the same stop delivered twice, and is
/// ignored: GNU `timeout` (and `kill -- -PGID`) signals the process and then its process group,
/// which holds it, so half the time the first cancel would otherwise be cut short before it wrote
/// the manifest.
final class Interruption: @unchecked Sendable {
    // @unchecked: `sources` is written only in `init`; `first` only under `lock`.
    private var sources: [any DispatchSourceSignal] = []
    private let lock = NSLock()
    private var first: (number: Int32, at: DispatchTime)?
    /// How soon after the first a signal is the same stop, in nanoseconds.
    private static let sameStop: UInt64 = 1_000_000_000

    init(onSignal: @escaping @Sendable () -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                let since: UInt64? = lock.withLock {
                    let now = DispatchTime.now()
                    defer { first = first ?? (number, now) }
                    return first.map { now.uptimeNanoseconds - $0.at.uptimeNanoseconds }
                }
                // _exit: other threads may be writing; the journal is consistent at every instant.
                if let since {
                    if since >= Self.sameStop { _exit(128 + number) }
                } else {
                    onSignal()
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    var received: Int32? { lock.withLock { first?.number } }
}
