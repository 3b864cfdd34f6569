/// The archiver's version, sent as `User-Agent: archiver/<version>`.
public enum ArchiverVersion {
    public static let current = "0.1.0"
}
