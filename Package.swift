// swift-tools-version:6.0
import PackageDescription

/// The commit `archiver --version` names: the Makefile sets ARCHIVER_COMMIT (`git rev-parse`);
/// a plain `swift build` has none and says `unknown`. Only hex digits and `-dirty` pass, so the
/// value is safe inside a C string literal.
let commit = Context.environment["ARCHIVER_COMMIT"].flatMap { value in
    value.allSatisfy { $0.isHexDigit || "-dirty".contains($0) } && !value.isEmpty ? value : nil
}

let package = Package(
    name: "archiver",
    products: [
        .executable(name: "archiver", targets: ["archiver"]),
        .library(name: "ArchiverCore", targets: ["ArchiverCore"]),
    ],
    targets: [
        .target(
            name: "CPNG",
            linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("z")]
        ),
        .target(name: "CJPEG", linkerSettings: [.linkedLibrary("jpeg")]),
        .target(name: "CWebP", linkerSettings: [.linkedLibrary("webpdemux"), .linkedLibrary("webp")]),
        .target(name: "CGIF", linkerSettings: [.linkedLibrary("gif")]),
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        // Linux constants Swift's Glibc leaves out (those behind _GNU_SOURCE), from the headers.
        .target(name: "CSystem"),
        .target(
            name: "CArchiverBuild",
            cSettings: commit.map { [.define("CARCHIVER_COMMIT", to: "\"\($0)\"")] } ?? []
        ),
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CLibArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"])]
        ),
        .target(name: "ArchiverCore", dependencies: [
            "CPNG", "CJPEG", "CWebP", "CGIF", "CCurl", "CSystem", "CLibCrypto", "CLibArchive",
        ]),
        // The built-in image server (`archiver serve`, the demo and the tests); the archiver's own
        // pipeline never calls it.
        .target(name: "ArchiverServer", dependencies: ["ArchiverCore", "CPNG"]),
        .executableTarget(
            name: "archiver", dependencies: ["ArchiverCore", "ArchiverServer", "CArchiverBuild"],
            // lld, the toolchain's own linker: gold warns about glibc's mktemp on every link of the
            // static Foundation (its atomic write opens the name with O_EXCL, so it is safe), and a
            // new user takes that warning for a broken build. lld also links the binary faster.
            linkerSettings: [.unsafeFlags(["-use-ld=lld"])]
        ),
        .testTarget(name: "ArchiverCoreTests", dependencies: ["ArchiverCore", "ArchiverServer"], exclude: ["Fixtures"]),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
