/// The archiver's version, sent as `User-Agent: archiver/<version>`.
package enum ArchiverVersion {
    package static let current = "0.1.0"
}
