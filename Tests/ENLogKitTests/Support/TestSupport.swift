import Foundation

/// Where the repository's fixtures live, found from this file so tests run from any directory.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func enml(_ kind: String) -> [URL] {
        let directory = root.appendingPathComponent("enml").appendingPathComponent(kind)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".enml") }.sorted().map { directory.appendingPathComponent($0) }
    }

    static let repositoryRoot = root.deletingLastPathComponent().deletingLastPathComponent()
    static let sharedDTDCatalog = repositoryRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/evernote/dtd/catalog.xml")
}

/// A scratch directory removed when the value goes away.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("enlog-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func file(_ name: String, contents: String) throws -> URL {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: file)
        return file
    }

    deinit {
        // Tests may leave it read-only on purpose.
        _ = chmod(url.path, 0o755)
        try? FileManager.default.removeItem(at: url)
    }
}

/// The outcome of running a program to completion.
struct ProcessResult {
    var status: Int32
    var standardOutput: String
    var standardError: String

    var standardErrorLines: [String] { standardError.split(separator: "\n").map(String.init) }
}

enum Subprocess {
    /// The `enlog` binary built beside the test bundle.
    static var enlog: URL {
        let bundleDirectory = Bundle.main.bundleURL.deletingLastPathComponent()
        for candidate in [Bundle.main.bundleURL, bundleDirectory] {
            let binary = candidate.appendingPathComponent("enlog")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        return Fixtures.repositoryRoot.appendingPathComponent(".build/debug/enlog")
    }

    /// Runs a program with its output captured through files, so large outputs cannot deadlock.
    static func run(_ executable: URL, _ arguments: [String], standardInput: Data? = nil,
                    environment: [String: String]? = nil, currentDirectory: URL? = nil) throws -> ProcessResult {
        let scratch = try TemporaryDirectory()
        let outURL = scratch.url.appendingPathComponent("out"), errURL = scratch.url.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = standardInput == nil ? FileHandle.nullDevice : input
        try process.run()
        if let standardInput {
            input.fileHandleForWriting.write(standardInput)
            try input.fileHandleForWriting.close()
        }
        process.waitUntilExit()
        try out.close()
        try err.close()
        return ProcessResult(status: process.terminationStatus,
                             standardOutput: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
                             standardError: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    static func enlog(_ arguments: String..., standardInput: Data? = nil) throws -> ProcessResult {
        try run(enlog, arguments, standardInput: standardInput)
    }

    /// The full path of a program on PATH, if installed.
    static func which(_ program: String) -> URL? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(program)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}

/// A clock tests move forward (past a retry time, a rate-limit hold, a cache TTL).
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }
    var now: Date { lock.withLock { current } }
    func advance(_ seconds: TimeInterval) { lock.withLock { current += seconds } }
}
