extension BundleLayout {
    /// A one-line account of a JSON decoding failure, with the coding path.
    static func summary(of error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        let context: DecodingError.Context
        switch error {
        case .dataCorrupted(let c), .keyNotFound(_, let c), .typeMismatch(_, let c), .valueNotFound(_, let c):
            context = c
        @unknown default:
            return "\(error)"
        }
        var path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        if case .keyNotFound(let key, _) = error { path += ".\(key.stringValue)" }
        return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
    }
}
