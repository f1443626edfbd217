import Foundation
import XCTest

/// Package.swift claims only what is true: the sources call Glibc unconditionally (Linux only), they
/// build in Swift 6 language mode, and every target is used.
final class PackageManifestTests: XCTestCase {
    static let root = Fixtures.repositoryRoot

    func manifest() throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
    }

    func testManifestClaimsNoPlatformBesidesLinuxAndSwift6Mode() throws {
        let text = try manifest()
        XCTAssertFalse(text.contains("platforms:"), "the sources call Glibc unconditionally: claim no other platform")
        XCTAssertFalse(text.contains("swiftLanguageModes"), "the package builds in Swift 6 language mode")
    }

    func testEverySystemLibraryTargetIsImportedAndEverySourceFolderIsATarget() throws {
        let text = try manifest()
        let systemLibraries = text.matches(of: /\.systemLibrary\(name: "(\w+)"/).map { String($0.output.1) }
        XCTAssertFalse(systemLibraries.isEmpty)
        let sources = Self.root.appendingPathComponent("Sources")
        var imports = Set<String>()
        let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = walker?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let code = try String(contentsOf: file, encoding: .utf8)
            for match in code.matches(of: /(?m)^\s*import\s+(\w+)/) { imports.insert(String(match.output.1)) }
        }
        let targets = Set(text.matches(of: /\.(?:systemLibrary|target|executableTarget)\(\s*name: "(\w+)"/).map { String($0.output.1) })
        for library in systemLibraries {
            // Imported by Swift code, or the dependency of a C target that wraps it.
            let wrapped = text.firstMatch(of: try Regex("dependencies: \\[[^\\]]*\"\(library)\"")) != nil
            XCTAssertTrue(imports.contains(library) || wrapped,
                          "system-library target \(library) is used by nothing")
        }
        for folder in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            XCTAssertTrue(targets.contains(folder), "Sources/\(folder) is no target of Package.swift")
        }
    }

    /// The library targets in the order data flows through them: location -> note -> outbox ->
    /// sync -> Evernote. A target may use only those before it, in Package.swift and in its imports.
    static let layers = ["Support", "EvernoteAPI", "Configuration", "Network", "Auth", "Capture", "Compose",
                         "Outbox", "Diary", "Sync", "Export", "Watch", "Serve", "ServeHTTP", "Fuzzing", "CoreCommands",
                         "EnlogServe", "enlog"]

    func testEveryTargetDependsOnlyOnTargetsBeforeItInTheFlow() throws {
        let text = try manifest()
        var declared: [String: [String]] = [:]
        for match in text.matches(of: /\.(?:target|executableTarget)\(\s*name: "(\w+)",\s*dependencies: \[([^\]]*)\]/) {
            let names = String(match.output.2).matches(of: /(?:^|[\s\[,])"(\w+)"/).map { String($0.output.1) }
            declared[String(match.output.1)] = names
        }
        for (rank, layer) in Self.layers.enumerated() {
            let dependencies = try XCTUnwrap(declared[layer], "Package.swift has no target \(layer) with dependencies") 
            for dependency in dependencies {
                guard let dependencyRank = Self.layers.firstIndex(of: dependency) else { continue }   // C and package products
                XCTAssertLessThan(dependencyRank, rank, "\(layer) depends on \(dependency), which comes after it in the flow")
            }
        }
        XCTAssertEqual(declared["Support"], [], "Support is the bottom layer")
    }

    /// SwiftNIO's protocol conformances are in enlog-serve only: the Swift runtime scans every
    /// conformance an executable holds on each first lookup of a type, and NIO's made every
    /// command slower to start (docs/benchmarks.md, "serve in its own executable").
    func testOnlyEnlogServeLinksSwiftNIO() throws {
        let text = try manifest()
        var declared: [String: String] = [:]
        for match in text.matches(of: /\.(?:target|executableTarget)\(\s*name: "(\w+)",\s*dependencies: \[([^\]]*)\]/) {
            declared[String(match.output.1)] = String(match.output.2)
        }
        func linksNIO(_ target: String, seen: inout Set<String>) -> Bool {
            guard seen.insert(target).inserted, let dependencies = declared[target] else { return false }
            if dependencies.contains("package: \"swift-nio\"") { return true }
            return dependencies.matches(of: /"(\w+)"/).contains { linksNIO(String($0.output.1), seen: &seen) }
        }
        var seen = Set<String>()
        XCTAssertFalse(linksNIO("enlog", seen: &seen), "enlog links SwiftNIO through one of \(seen.sorted())")
        seen = []
        XCTAssertTrue(linksNIO("EnlogServe", seen: &seen), "enlog-serve runs the receiver on SwiftNIO")
        // The binary the tests run: no NIO type's metadata in it. Searched by grep, not read in
        // here: its 130 MB need not stay in the test process.
        let search = try Subprocess.run(URL(fileURLWithPath: "/bin/grep"), ["-c", "-a", "-F", "7NIOCore", Subprocess.enlog.path])
        XCTAssertEqual(search.standardOutput, "0\n", "\(Subprocess.enlog.path) holds NIOCore's symbols")
    }

    /// At most four types whose thread safety the compiler takes on trust (raw C handles and buffers,
    /// and the import's writing thread), each saying why just above it (a comment naming `@unchecked`).
    func testFewUncheckedSendablesEachExplained() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        var found: [String] = []
        let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = walker?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() where line.contains("@unchecked Sendable") && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                found.append("\(file.lastPathComponent):\(number + 1)")
                let above = lines[max(0, number - 4)..<number]
                XCTAssertTrue(above.contains { $0.contains("//") && $0.contains("@unchecked") },
                              "\(file.lastPathComponent):\(number + 1) is @unchecked Sendable without a comment above it saying why")
            }
        }
        XCTAssertLessThanOrEqual(found.count, 4, "@unchecked Sendable: \(found.sorted())")
    }

    func testNoSourceImportsATargetAfterItsOwn() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        var checked = 0
        for (rank, layer) in Self.layers.enumerated() {
            let walker = FileManager.default.enumerator(at: sources.appendingPathComponent(layer), includingPropertiesForKeys: nil)
            while let file = walker?.nextObject() as? URL {
                guard file.pathExtension == "swift" else { continue }
                checked += 1
                let code = try String(contentsOf: file, encoding: .utf8)
                for match in code.matches(of: /(?m)^\s*(?:@\w+\s+)*import\s+(\w+)/) {
                    let module = String(match.output.1)
                    guard let imported = Self.layers.firstIndex(of: module) else { continue }
                    XCTAssertLessThan(imported, rank, "\(layer)/\(file.lastPathComponent) imports \(module), which comes after it in the flow")
                }
            }
        }
        XCTAssertGreaterThan(checked, 100)
    }
}
