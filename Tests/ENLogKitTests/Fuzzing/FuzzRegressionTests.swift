import Foundation
import XCTest
@testable import Fuzzing

/// The inputs the fuzzers found defects with belong to a target each (`FuzzFindingTests` runs
/// them, each in a child process), the hand-written seeds run clean, and the targets, their Fuzz/
/// folders and scripts/fuzz name the same parsers.
final class FuzzRegressionTests: XCTestCase {
    static let root = Fixtures.repositoryRoot

    static func files(in folder: String) throws -> [URL] {
        let directory = root.appendingPathComponent(folder)
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { !$0.hasDirectoryPath }.sorted { $0.path < $1.path }
    }

    static func run(_ target: FuzzTarget, _ file: URL) {
        do {
            try target.run([UInt8](try Data(contentsOf: file)))
        } catch {
            XCTFail("\(file.path): \(error)")
        }
    }

    func testEveryFindingsFolderNamesATarget() throws {
        let fixtures = Self.root.appendingPathComponent("Tests/Fixtures/fuzz").path
        for folder in (try? FileManager.default.contentsOfDirectory(atPath: fixtures)) ?? [] {
            XCTAssertTrue(FuzzTarget.all.contains { $0.name == folder }, "Tests/Fixtures/fuzz/\(folder) names no fuzz target")
        }
    }

    /// The hand-written seeds are the shapes the targets must take in their stride.
    func testTheHandWrittenSeedsRunClean() throws {
        for target in FuzzTarget.all {
            for file in try Self.files(in: "Fuzz/seeds/\(target.name)") { Self.run(target, file) }
        }
    }

    func testTheTargetsTheirFoldersAndTheScriptAgree() throws {
        let names = FuzzTarget.all.map(\.name)
        XCTAssertEqual(Set(names).count, names.count)
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Fuzz").path)
            .filter { FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("Fuzz/\($0)/fuzz.swift").path) }
        XCTAssertEqual(Set(folders), Set(names), "every target has its Fuzz/<name>/fuzz.swift, and nothing else does")
        for name in names {
            let entry = try String(contentsOf: Self.root.appendingPathComponent("Fuzz/\(name)/fuzz.swift"), encoding: .utf8)
            XCTAssertTrue(entry.contains("FuzzTarget.\(name).fuzz("), "Fuzz/\(name)/fuzz.swift runs another target")
        }
        let script = try String(contentsOf: Self.root.appendingPathComponent("scripts/fuzz"), encoding: .utf8)
        let listed = try XCTUnwrap(script.firstMatch(of: /(?m)^targets=\(([^)]*)\)/)).output.1.split(separator: " ").map(String.init)
        XCTAssertEqual(listed, names, "scripts/fuzz runs the targets FuzzTarget.all names, in its order")
    }
}
