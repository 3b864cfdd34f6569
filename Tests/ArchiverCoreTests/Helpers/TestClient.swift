import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An independent HTTP client for testing the server: one URLSession for the whole test
/// process, never torn down (short-lived sessions have crashed on Linux; see platform.md).
enum TestClient {
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.timeoutIntervalForRequest = 10
        return URLSession(configuration: configuration)
    }()
}
