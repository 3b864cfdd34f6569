import Foundation

/// One download: a distinct URL to fetch and every record that needs its body.
struct FetchJob: Sendable {
    /// A record that gets its file from this job's body.
    struct Target: Sendable, Equatable {
        var id: RecordID
        /// Where the record is in the catalog: what its outcome is filed under in the ledger.
        var position: Int32
        /// The catalog URL of this record (before `--mirror`).
        var url: String
        /// `previous`, boxed: an `ItemRecord` in place made every queued target 256 bytes, and at
        /// `--concurrency 1024` up to about 40,000 are read ahead or in operations; 64 this way.
        private let revalidation: Revalidation?
        /// The SHA-256 the catalog expects of the body (`--sha256`), as written there.
        var expectedSHA256: String?

        /// With `--refresh`, the done outcome being revalidated: it stands unless the server
        /// sends other bytes.
        var previous: ItemRecord? { revalidation?.record }

        init(id: RecordID, position: Int32, url: String, previous: ItemRecord? = nil, expectedSHA256: String? = nil) {
            self.id = id
            self.position = position
            self.url = url
            self.expectedSHA256 = expectedSHA256
            revalidation = previous.map(Revalidation.init)
        }

        static func == (a: Target, b: Target) -> Bool {
            a.id == b.id && a.position == b.position && a.url == b.url && a.previous == b.previous && a.expectedSHA256 == b.expectedSHA256
        }
    }

    /// A done outcome `--refresh` revalidates, held by reference.
    final class Revalidation: Sendable {
        let record: ItemRecord

        init(_ record: ItemRecord) {
            self.record = record
        }
    }

    var targets: [Target]
    /// The URL fetched (after `--mirror`): an absolute http(s) URL, as `URL.absoluteString` has it.
    let address: String
    /// The scheme, host and port of `address` (`HostLanes.host(of:)`): its lane and its entry in
    /// the host watch, made once per job rather than at every step that asks.
    let host: String
    /// What to ask the server with (a conditional request): the validators every target was
    /// done with, when they all have the same; otherwise nil, a plain GET (a 304 would leave a
    /// target without its file).
    let ifChanged: Validators?

    init(address: String, targets: [Target]) {
        self.address = address
        self.targets = targets
        host = HostLanes.host(of: address)
        let validators = targets.first?.previous?.validators
        ifChanged = validators.flatMap { validators in
            !validators.isEmpty && targets.allSatisfy({ $0.previous?.validators == validators }) ? validators : nil
        }
    }

    /// Whether any target is a done item being revalidated.
    var isRevalidation: Bool { targets.contains { $0.previous != nil } }
}

/// What a run must do, derived from the catalog and what the journal says is already done.
///
/// It holds positions in the catalog, not records: a job's URL is read back from the catalog
/// when the job is about to be queued (`job(_:reader:)`), so a plan for 100,000 records costs
/// a few bytes per record rather than a URL and a job object each.
struct Plan: Sendable {
    /// Positions of records whose outcome carries over from earlier runs (done with the file
    /// intact, or a failure kept by `--skip-failed`); the journal index has their outcome.
    var kept: [Int32] = []
    /// Of `kept`, how many are done.
    var keptDone = 0
    /// Positions of records that fail before any request (an id that can name no file, a URL
    /// that is not http(s)), in catalog order: `rejections(of:_:)` makes their outcomes again
    /// from the catalog, whose ids and URLs may be long (a string id of 4 MiB).
    var rejected: [Int32] = []
    /// With `--refresh`: positions of records done with the file intact that are fetched again,
    /// conditionally (in increasing order); their journaled outcome stands until the server answers.
    var revalidating: [Int32] = []
    /// Records journaled as done for a URL the catalog no longer has: their old line must be
    /// superseded before anything is fetched, or a kill before the new outcome is journaled
    /// would leave it vouching for a file that now holds other bytes.
    /// Their positions, in catalog order: `invalidations(of:_:)` makes the lines from the
    /// journal (a catalog moved to another host changes every URL, and a line held for each
    /// record, URLs and all, cost a few hundred bytes a record).
    var invalidated: [Int32] = []
    /// One job per distinct URL to fetch, in catalog order: the position of its first record.
    var jobs: [Int32] = []
    /// Later records sharing a job's URL (duplicate URLs are rare), by job index.
    var sharers: [Int: [Int32]] = [:]
    /// Records to attempt this run.
    var pendingRecords = 0
    /// Of those, records that failed in an earlier run and are tried again.
    var retryingFailures = 0

    let field: ImageField
    /// Which `--mirror` rule each record takes, chosen here once per record: the job's address,
    /// the ledger and the manifest make the URL to fetch from it.
    let mirrors: MirrorChoices
    /// The journal the plan was made from: a revalidated record's outcome is read back from it.
    let journal: JournalIndex

    /// Records whose outcome carries over.
    var keptCount: Int { kept.count }
    /// Distinct URLs to fetch.
    var jobCount: Int { jobs.count }

    /// Groups records by the URL to fetch (so each distinct URL is requested once) and skips
    /// records journaled done whose file `intact` vouches for (see `ResumeCheck`), or, with
    /// `refresh`, plans them to be revalidated.
    init(
        catalog: Catalog, field: ImageField, mirrors: MirrorMap, journal: JournalIndex,
        skipFailed: Bool, refresh: Bool = false, intact: (ItemRecord) -> Bool
    ) {
        self.field = field
        self.journal = journal
        var choices = MirrorChoices(mirrors, count: catalog.records.count)
        // Jobs by the hash of their URL; a URL whose hash an earlier, different URL already has
        // goes in `collided`. Only a matching hash costs a read of the earlier record. URLs are
        // compared as bytes: String's == calls two Unicode-equivalent spellings equal, and a
        // server may not.
        var byHash: [Int: Int32] = [:]
        byHash.reserveCapacity(catalog.records.count)
        var collided: [[UInt8]: Int32] = [:]
        var records = CatalogReader(catalog.records)
        var earlier = CatalogReader(catalog.records)
        for position in catalog.records.indices {
            let record = records.record(position, fields: .image(field))
            let url = record.url(for: field)
            choices.choose(url, at: position)
            if !journal.isEmpty, let previous = journal.record(for: record.id) {
                let sameURL = previous.url.hasSameBytes(as: url)
                if !sameURL, previous.status == .done {
                    invalidated.append(Int32(position))
                }
                if sameURL {
                    if previous.status == .done, intact(previous) {
                        if refresh {
                            revalidating.append(Int32(position))
                        } else {
                            kept.append(Int32(position))
                            keptDone += 1
                            continue
                        }
                    }
                    if previous.status == .failed {
                        if skipFailed {
                            kept.append(Int32(position))
                            continue
                        }
                        retryingFailures += 1
                    }
                }
            }
            let source = choices.address(of: url, at: position)
            guard Self.unsafeKey(record.id) == nil, record.urlProblem == nil, Self.isHTTPURL(source) else {
                rejected.append(Int32(position))
                continue
            }
            pendingRecords += 1
            let hash = source.hashValue
            var shared: Int32?
            if let job = byHash[hash] {
                let first = Int(jobs[Int(job)])
                if choices.address(of: earlier.record(first, fields: .image(field)).url(for: field), at: first).hasSameBytes(as: source) {
                    shared = job
                } else {
                    shared = collided[Array(source.utf8)]
                    if shared == nil { collided[Array(source.utf8)] = Int32(jobs.count) }
                }
            } else {
                byHash[hash] = Int32(jobs.count)
            }
            if let shared {
                sharers[Int(shared), default: []].append(Int32(position))
            } else {
                jobs.append(Int32(position))
            }
        }
        self.mirrors = choices
    }

    /// Job `index`, its URL and targets read back from the catalog; nil only if the catalog
    /// was edited during the run and the URL no longer reads (the run then ends with an error).
    func job(_ index: Int, reader: inout CatalogReader) -> FetchJob? {
        let fields: CatalogParser.Fields = [.image(field), .sha256]
        let position = jobs[index]
        let first = reader.record(Int(position), fields: fields)
        let url = first.url(for: field)
        var targets = [
            FetchJob.Target(
                id: first.id, position: position, url: url, previous: revalidated(Int(position), id: first.id),
                expectedSHA256: first.expectedSHA256)
        ]
        for position in sharers[index] ?? [] {
            let record = reader.record(Int(position), fields: fields)
            targets.append(
                FetchJob.Target(
                    id: record.id, position: position, url: record.url(for: field), previous: revalidated(Int(position), id: record.id),
                    expectedSHA256: record.expectedSHA256))
        }
        return Self.address(of: mirrors.address(of: url, at: Int(position))).map { FetchJob(address: $0, targets: targets) }
    }

    /// The journaled done outcome of the record at `position`, if it is being revalidated.
    private func revalidated(_ position: Int, id: RecordID) -> ItemRecord? {
        var low = 0, high = revalidating.count
        while low < high {
            let middle = (low + high) / 2
            if revalidating[middle] < position { low = middle + 1 } else { high = middle }
        }
        guard low < revalidating.count, revalidating[low] == Int32(position) else { return nil }
        return journal.record(for: id)
    }

    /// The pending lines that supersede the done lines of `invalidated` (the journaled URL and
    /// source, so the line names what the old file held), handed to `body` 1024 at a time.
    func invalidations<Failure: Error>(of records: CatalogRecords, _ body: ([ItemRecord]) throws(Failure) -> Void) throws(Failure) {
        var batch: [ItemRecord] = []
        for position in invalidated {
            let id = records.id(at: Int(position))
            guard let previous = journal.record(for: id) else { continue }
            batch.append(ItemRecord(id: id, url: previous.url, source: previous.source, status: .pending))
            if batch.count >= 1024 {
                try body(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try body(batch) }
    }

    /// Records that fail before any request.
    var rejectedCount: Int { rejected.count }

    /// The failed outcomes of the rejected records, read back from `records` and handed to
    /// `body` with their positions, in batches of at most 1024 records or about 1 MiB of ids and URLs.
    func rejections<Failure: Error>(
        of records: CatalogRecords, _ body: ([ItemRecord], ArraySlice<Int32>) throws(Failure) -> Void
    ) throws(Failure) {
        var reader = CatalogReader(records)
        var batch: [ItemRecord] = []
        var start = 0
        var bytes = 0
        for (index, position) in rejected.enumerated() {
            let outcome = rejection(of: reader.record(Int(position), fields: .image(field)), at: Int(position))
            bytes += outcome.id.text.utf8.count + outcome.url.utf8.count + outcome.source.utf8.count
            batch.append(outcome)
            if batch.count >= 1024 || bytes >= 1 << 20 {
                try body(batch, rejected[start...index])
                batch.removeAll(keepingCapacity: true)
                start = index + 1
                bytes = 0
            }
        }
        if !batch.isEmpty { try body(batch, rejected[start...]) }
    }

    /// Why `record` (at `position`) fails before any request: its id can name no file, or its
    /// URL is not an http(s) URL (as the plan found).
    func rejection(of record: CatalogRecord, at position: Int) -> ItemRecord {
        let url = record.url(for: field)
        let source = mirrors.address(of: url, at: position)
        let error: ItemError
        if let problem = Self.unsafeKey(record.id) {
            error = problem
        } else if let problem = record.urlProblem {
            return ItemRecord(id: record.id, url: "", source: "", status: .failed, error: RecordedError(ItemError.invalidURL(problem)))
        } else if url.isEmpty {
            error = .invalidURL("the record has no \"\(field)\", or an empty one")
        } else {
            error = .invalidURL(source)
        }
        return ItemRecord(id: record.id, url: url, source: source, status: .failed, error: RecordedError(error))
    }

    /// Why a record's id cannot name its file (`RecordKey.refusal`); nil when it can.
    static func unsafeKey(_ id: RecordID) -> ItemError? {
        id.string.flatMap(RecordKey.refusal(for:)).map(ItemError.unsafeKey)
    }

    /// Whether `httpURL(text)` is a URL, without parsing the common simple URL into one (that
    /// parse was nearly half of planning 5000 records, 2.6 of 5.9 ms): `address(of:)`'s check.
    static func isHTTPURL(_ text: String) -> Bool {
        address(of: text) != nil
    }

    /// `http://` or `https://` (any case), a host of letters, digits and `.-_~`, an optional port
    /// of 1 to 5 digits, then nothing or a path or query of unreserved characters, sub-delims
    /// and `:@/?`: a strict subset of what `URL(string:)` accepts with that scheme and a host.
    /// Anything else (`%`, `#`, `[`, userinfo, non-ASCII, spaces) returns false.
    static func isSimpleHTTPURL(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
        func isUnreserved(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: true  // 0-9 A-Z a-z - . _ ~
            default: false
            }
        }
        var index = 0
        for byte in "http".utf8 {
            guard index < utf8.count, lower(utf8[index]) == byte else { return false }
            index += 1
        }
        if index < utf8.count, lower(utf8[index]) == 0x73 { index += 1 }  // s
        for byte in "://".utf8 {
            guard index < utf8.count, utf8[index] == byte else { return false }
            index += 1
        }
        let hostStart = index
        while index < utf8.count, isUnreserved(utf8[index]) { index += 1 }
        guard index > hostStart else { return false }
        if index < utf8.count, utf8[index] == 0x3A {  // :port
            index += 1
            let portStart = index
            while index < utf8.count, (0x30...0x39).contains(utf8[index]) { index += 1 }
            guard (1...5).contains(index - portStart) else { return false }
        }
        guard index == utf8.count || utf8[index] == 0x2F || utf8[index] == 0x3F else { return false }  // / or ?
        while index < utf8.count {
            let byte = utf8[index]
            switch byte {
            // ! $ & ' ( ) * + , ; = : @ / ?
            case 0x21, 0x24, 0x26...0x2C, 0x3B, 0x3D, 0x3A, 0x40, 0x2F, 0x3F: break
            default: guard isUnreserved(byte) else { return false }
            }
            index += 1
        }
        return true
    }

    /// `text` as `httpURL(text)?.absoluteString` gives it, without parsing a simple URL (which
    /// that leaves as it is).
    static func address(of text: String) -> String? {
        var text = text
        return text.withUTF8(isSimpleHTTPURL) ? text : httpURL(text)?.absoluteString
    }

    /// The URL if it is an absolute http(s) URL with a host; the archiver never reads local files.
    static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else { return nil }
        return url
    }
}
