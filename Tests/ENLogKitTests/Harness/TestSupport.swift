import Foundation
import Synchronization
@testable import Network

/// Where the repository's fixtures live, found from this file so tests run from any directory.
enum Fixtures {
    /// The checkout: the nearest folder above this file that holds Package.swift, so moving a
    /// test file between folders never breaks the paths.
    static let repositoryRoot: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder
    }()
    static let root = repositoryRoot.appendingPathComponent("Tests/Fixtures")
    /// The Python test servers and peers.
    static let support = repositoryRoot.appendingPathComponent("Tests/support")

    static func enml(_ kind: String) -> [URL] {
        let directory = root.appendingPathComponent("enml").appendingPathComponent(kind)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".enml") }.sorted().map { directory.appendingPathComponent($0) }
    }

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
final class TestClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

/// A name resolver that hangs the way `getaddrinfo` does behind a dead name server, until the test
/// calls `release()` (tests do, in a defer, so that no thread outlives them). Each call is announced
/// on `calls`, so a test can wait for the lookup to have started without sleeping.
final class HangingResolver: Sendable {
    private let gate = DispatchSemaphore(value: 0)
    let calls: AsyncStream<String>
    private let announce: AsyncStream<String>.Continuation

    init() {
        (calls, announce) = AsyncStream.makeStream(of: String.self)
    }

    var resolver: NameLookup.Resolver {
        { [gate, announce] name, _, _ in
            announce.yield(name)
            gate.wait()
            gate.signal()   // let every other hanging call go too
            return NameLookup.Answer(status: EAI_AGAIN, entries: [])
        }
    }

    /// Returns once a lookup has started.
    func firstCall() async -> String? {
        var iterator = calls.makeAsyncIterator()
        return await iterator.next()
    }

    func release() { gate.signal() }
}

extension NameLookup.Answer {
    /// An answer listing `literals` (IP addresses) with `port`, as `getaddrinfo` would.
    static func found(_ literals: [String], port: UInt16) -> NameLookup.Answer {
        let entries = literals.map { literal -> NameLookup.Entry in
            let address = try! ReachabilityAddress(host: literal, port: port)
            let bytes = address.withSockaddr { pointer, length in
                Array(UnsafeRawBufferPointer(start: pointer, count: Int(length)))
            }
            return NameLookup.Entry(family: address.addressFamily, socketType: Int32(SOCK_STREAM.rawValue),
                                    protocolNumber: Int32(IPPROTO_TCP), socketAddress: bytes)
        }
        return NameLookup.Answer(status: 0, entries: entries)
    }
}
