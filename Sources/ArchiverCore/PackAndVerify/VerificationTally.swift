/// The report `verify` builds as the manifest's items stream past: counts, and the problems of
/// the first `VerificationReport.maxNamed` bad done items; the caller finds the unexpected files
/// (those of `images/` the manifest does not list).
struct VerificationTally {
    private var report: VerificationReport

    init(source: String) {
        report = VerificationReport(source: source, items: 0, done: 0, verified: 0, failed: 0, pending: 0, problems: [])
    }

    /// Counts `item`; for a done item, returns the path its file must be at.
    mutating func count(_ item: Manifest.Item) -> String? {
        report.items += 1
        switch item.status {
        case .failed: report.failed += 1
        case .pending: report.pending += 1
        case .done:
            report.done += 1
            // A done item without a path whose id names no file has no file to check.
            let path = item.path ?? KeyedStore.relativePath(for: item.id, format: item.format ?? .png) ?? "images/"
            return path
        }
        return nil
    }

    /// Checks a done item against the facts of its file (nil: no file).
    mutating func check(_ item: Manifest.Item, path: String, facts: FileFacts?) {
        if let problem = Self.problem(with: item, path: path, facts: facts) {
            if report.badItems < VerificationReport.maxNamed { report.problems.append(problem) }
            report.badItems += 1
        } else {
            report.verified += 1
        }
    }

    /// The report, with the unexpected files counted in `unexpected` and the paths it keeps
    /// (at most `VerificationReport.maxNamed`, put in byte order) named.
    func report(unexpected: Sample) -> VerificationReport {
        var report = report
        for path in unexpected.first.prefix(VerificationReport.maxNamed).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            report.problems.append(.init(id: nil, path: path, kind: .unexpected, detail: "unexpected file"))
        }
        report.unexpectedFiles = unexpected.count
        return report
    }

    private static func problem(with item: Manifest.Item, path: String, facts: FileFacts?) -> VerificationReport.Problem? {
        func problem(_ kind: VerificationReport.Problem.Kind, _ detail: String) -> VerificationReport.Problem {
            .init(id: item.id, path: path, kind: kind, detail: detail)
        }
        if let recorded = item.path, !Manifest.isOwnPath(recorded, for: item.id) {
            return problem(.pathMismatch, "the manifest's path is not the id's own file name")
        }
        guard let facts else { return problem(.missing, "missing") }
        guard facts.isRegularFile else { return problem(.notRegularFile, "not a regular file") }
        if let bytes = item.bytes, bytes != facts.bytes {
            return problem(.sizeMismatch, "size mismatch: \(facts.bytes) bytes, manifest says \(bytes)")
        }
        if let sha256 = item.sha256, sha256 != facts.sha256 {
            return problem(.sha256Mismatch, "sha256 mismatch")
        }
        if let error = facts.imageError {
            return problem(VerificationReport.Problem.Kind(rawValue: error.kind) ?? .invalidPNG, error.description)
        }
        if let image = facts.image, image.format != ImageFormat.of(fileName: path) || image.format != item.format ?? .png {
            return problem(.formatMismatch, "the file is a \(image.format.displayName)")
        }
        if let image = facts.image, let width = item.width, let height = item.height,
            image.width != width || image.height != height
        {
            return problem(
                .dimensionsMismatch, "dimensions \(image.width)x\(image.height), manifest says \(width)x\(height)")
        }
        return nil
    }
}
