// swift-tools-version:6.0
import Foundation
import PackageDescription

// libFuzzer targets for `make fuzz`, in a package of their own so that `swift build` and
// `make test` of the main package never need libFuzzer. Each is a few lines over one
// `FuzzTarget` entry point of ArchiverCore, which the corpus replay test calls too.
//
// The main package is a path dependency; its identity is the name of its directory.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let core = Target.Dependency.product(name: "ArchiverCore", package: root.lastPathComponent)

let package = Package(
    name: "archiver-fuzz",
    dependencies: [.package(path: "..")],
    targets: ["png", "jpeg", "webp", "gif", "catalog", "journal", "csv", "manifest"].map { name in
        .executableTarget(name: "fuzz-\(name)", dependencies: [core], path: "Sources/fuzz-\(name)")
    }
)
