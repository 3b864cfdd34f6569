import Dispatch
import Foundation

/// Reads a catalog from a file path or fetches it from an http(s) URL (2xx only).
public enum CatalogLoader {
    /// Loads and parses the catalog; blocks the calling thread (call it from the command's main thread).
    public static func load(_ source: String, fetcher: any Fetching) throws(CatalogError) -> Catalog {
        let lowered = source.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard let url = URL(string: source) else { throw .unreadable(source: source, reason: "not a valid URL") }
            let result = Locked<FetchOutcome?>(nil)
            let finished = DispatchSemaphore(value: 0)
            _ = fetcher.fetch(url) { outcome in
                result.withLock { $0 = outcome }
                finished.signal()
            }
            finished.wait()
            switch result.withLock({ $0 }) {
            case .body(let data, _, _)?:
                return try Catalog(source: source, data: data)
            case .failed(let error, _)?:
                throw .unreadable(source: source, reason: error.description)
            case .cancelled?, .notModified?, nil:  // a plain GET never gets notModified
                throw .unreadable(source: source, reason: "the download was cancelled")
            }
        }
        return try Catalog(source: source, path: source)
    }
}
