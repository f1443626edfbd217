// swift-tools-version:6.0
import Foundation
import PackageDescription

// Linux only (Debian 12 is what CI runs): the sources call Glibc directly, so no other platform is claimed.

// <cairo/cairo-ft.h> includes <ft2build.h>, which Debian's libfreetype-dev installs in its own
// folder; pkg-config would add it, and with it the -lfreetype that CLazyLibraries replaces.
let freeTypeHeaders = CSetting.unsafeFlags(["-I/usr/include/freetype2"])
// The same for libxml2's headers (libxml2-dev), and its -lxml2, for C and for Swift's importer.
let libXML2Headers = CSetting.unsafeFlags(["-I/usr/include/libxml2"])
let libXML2HeadersForSwift = SwiftSetting.unsafeFlags(["-Xcc", "-I/usr/include/libxml2"])

// lld packs an executable's relative relocations (DT_RELR, glibc 2.36+): 20 kB instead of 2.4 MB
// of .rela.dyn that ld.so reads at every start and that stayed resident in watch
// (docs/benchmarks.md, "Memory: `bench/watch memory`").
let relativeRelocationsPacked = LinkerSetting.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"])

let package = Package(
    name: "enlog",
    products: [
        .executable(name: "enlog", targets: ["enlog"]),
        // `enlog serve`'s receiver, which `enlog serve` runs (Sources/EnlogServe says why apart).
        .executable(name: "enlog-serve", targets: ["EnlogServe"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // The phones' receiver (`enlog serve`): HTTP/1.1 from a kept server library, no parser of ours.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // serve.tls_certificate / serve.tls_key: TLS in `enlog serve` itself (BoringSSL, built from source).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .systemLibrary(name: "CLibXML2",
                       providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CCurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CCairo",
                       providers: [.apt(["libcairo2-dev"])]),
        .systemLibrary(name: "CLibPNG",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CMagic",
                       providers: [.apt(["libmagic-dev"])]),
        .systemLibrary(name: "CExif",
                       providers: [.apt(["libexif-dev"])]),
        .systemLibrary(name: "CArchive",
                       providers: [.apt(["libarchive-dev"])]),
        // yajl's push parser: `enlog import` feeds multi-gigabyte JSON exports to it chunk by chunk.
        .systemLibrary(name: "CYAJL",
                       providers: [.apt(["libyajl-dev"])]),
        // libmosquitto: `enlog serve` subscribes to OwnTracks' MQTT topics when serve.mqtt_broker is set.
        .systemLibrary(name: "CMosquitto",
                       providers: [.apt(["libmosquitto-dev"])]),
        // glibc's malloc.h (malloc_trim): a long-running `watch` hands back what a digest freed.
        .systemLibrary(name: "CMalloc"),
        // The libraries only some commands use, loaded on their first call rather than at start:
        // CCurl, CArchive, CMagic, CExif, CYAJL, CCairo, CLibPNG, CLibXML2 and CMosquitto give their headers
        // only, no -l flag (so no pkg-config, which would add one).
        .target(name: "CLazyLibraries", dependencies: ["CCurl", "CArchive", "CMagic", "CExif", "CYAJL", "CCairo", "CLibPNG", "CLibXML2", "CMosquitto"],
                cSettings: [freeTypeHeaders, libXML2Headers]),
        .target(name: "CCurlShim", dependencies: ["CCurl", "CLazyLibraries"]),
        // libpng's longjmp errors and FreeType's font loading, kept in C for the map renderer.
        .target(name: "CMapShim", dependencies: ["CLibPNG", "CCairo", "CLazyLibraries"],
                cSettings: [freeTypeHeaders], linkerSettings: [.linkedLibrary("z")]),
        // The library targets follow the flow of data, each depending only on targets above it
        // in this list: location -> note -> outbox -> sync -> Evernote. A dependency against the
        // flow does not compile; Tests/ENLogKitTests/Commands/PackageManifestTests.swift checks the order.
        .target(name: "Support", dependencies: []),
        .target(name: "EvernoteAPI", dependencies: ["Support"]),
        // config.toml is read by enlog's own TOML reader (Configuration/TOMLReader.swift).
        .target(name: "Configuration", dependencies: ["Support"]),
        .target(name: "Network", dependencies: ["Support", "EvernoteAPI", "Configuration", "CCurlShim", "CLazyLibraries", "CMosquitto"]),
        .target(name: "Auth", dependencies: [
            "Support", "EvernoteAPI", "Configuration", "Network",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .target(name: "Capture", dependencies: ["Support", "Configuration", "Network", "CLibXML2", "CExif", "CYAJL", "CLazyLibraries"],
                swiftSettings: [libXML2HeadersForSwift]),
        .target(
            name: "Compose",
            dependencies: [
                "Support", "EvernoteAPI", "Configuration", "Network", "Capture",
                "CLibXML2", "CCairo", "CMapShim", "CMagic", "CLazyLibraries",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [
                .embedInCode("ENML/DTD/enml2.dtd"),
                .embedInCode("ENML/DTD/xhtml-lat1.ent"),
                .embedInCode("ENML/DTD/xhtml-special.ent"),
                .embedInCode("ENML/DTD/xhtml-symbol.ent"),
                .embedInCode("Note/DefaultTemplate/title.mustache"),
                .embedInCode("Note/DefaultTemplate/content.mustache"),
                // templates/classic: the original title; its content is the default's.
                .embedInCode("Note/ClassicTitle.mustache"),
            ],
            swiftSettings: [libXML2HeadersForSwift]
        ),
        .target(name: "Outbox", dependencies: [
            "Support", "EvernoteAPI", "Configuration", "Capture", "Compose",
            .product(name: "GRDB", package: "GRDB.swift"),
            // The history import binds its rows through SQLite's C API: GRDB's arguments per row cost more than the insert.
            .product(name: "GRDBSQLite", package: "GRDB.swift"),
        ]),
        .target(name: "Diary", dependencies: ["Support", "EvernoteAPI", "Configuration", "Network", "Capture", "Compose", "Outbox", "CArchive", "CLazyLibraries"]),
        .target(name: "Sync", dependencies: ["Support", "EvernoteAPI", "Configuration", "Network", "Auth", "Capture", "Compose", "Outbox", "Diary"]),
        // Beside Sync, above it: an export writes the note a sync would upload, and an export
        // that marks notes holds the sync lock.
        .target(name: "Export", dependencies: ["Support", "EvernoteAPI", "Compose", "Outbox", "Diary", "Sync"]),
        .target(name: "Watch", dependencies: ["Support", "EvernoteAPI", "Configuration", "Network", "Auth", "Capture", "Compose", "Outbox", "Diary", "Sync", "CMalloc"]),
        // The phones' receiver: each request's points stored in one transaction, then handed to
        // watch's decisions per device; devices and their secrets.
        .target(name: "Serve", dependencies: [
            "Support", "EvernoteAPI", "Configuration", "Network", "Auth", "Capture", "Compose", "Outbox", "Diary", "Sync", "Watch",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Its HTTP/1.1 on SwiftNIO, a kept server library (no parser of ours). Only enlog-serve
        // links it: NIO's protocol conformances would slow every other command's start.
        .target(name: "ServeHTTP", dependencies: [
            "Support", "Configuration", "Capture", "Watch", "Serve",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        // How each parser of outside input is driven, one input at a time: the libFuzzer targets
        // (Fuzz/, scripts/fuzz) and the regression tests of their findings share it.
        .target(name: "Fuzzing", dependencies: ["EvernoteAPI", "Configuration", "Network", "Auth", "Capture", "Compose", "Diary"]),
        // What both executables' command lines share: global options, exit codes, the terminal,
        // the `main` that turns every failure into one line and an exit code.
        .target(name: "CoreCommands", dependencies: [
            "Support", "Configuration", "Diary", "Sync",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(
            name: "EnlogServe",
            dependencies: [
                "Support", "EvernoteAPI", "Configuration", "Network", "Auth", "Capture", "Outbox", "Watch", "Serve", "ServeHTTP", "CoreCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: [relativeRelocationsPacked]
        ),
        .executableTarget(
            name: "enlog",
            dependencies: [
                "Support", "EvernoteAPI", "Configuration", "Network", "Auth", "Capture", "Compose", "Outbox", "Diary", "Sync", "Export", "Watch", "Serve",
                "CoreCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: [relativeRelocationsPacked]
        ),
        .testTarget(
            name: "ENLogKitTests",
            dependencies: ["Support", "EvernoteAPI", "Configuration", "Network", "Auth", "Capture", "Compose", "Outbox", "Diary", "Sync", "Export", "Watch", "Serve",
                           "ServeHTTP", "CoreCommands", "enlog", "Fuzzing", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Mustache", package: "swift-mustache")],
            // @testable imports see the modules' internal imports, CLibXML2 among them.
            swiftSettings: [libXML2HeadersForSwift]
        ),
    ]
)

// The libFuzzer targets (Fuzz/<name>/, built and run by scripts/fuzz): libFuzzer supplies their
// `main`, so they belong to the package only in the fuzz build (ENLOG_FUZZ=1), never to
// `swift build` or `swift test`. Each runs one `FuzzTarget` of the Fuzzing target.
if Context.environment["ENLOG_FUZZ"] != nil {
    let fuzz = Context.packageDirectory + "/Fuzz"
    for name in ((try? FileManager.default.contentsOfDirectory(atPath: fuzz)) ?? []).sorted()
    where FileManager.default.fileExists(atPath: "\(fuzz)/\(name)/fuzz.swift") {
        package.targets.append(.executableTarget(name: "fuzz-\(name)", dependencies: ["Fuzzing"], path: "Fuzz/\(name)",
                                                 swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
    }
}
