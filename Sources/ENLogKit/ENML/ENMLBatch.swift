import Foundation

/// A document to validate: a file, or standard input (`-` on the command line).
public enum ENMLSource: Sendable, Equatable {
    case file(String)
    case standardInput

    public var displayName: String {
        switch self {
        case .file(let path): return path
        case .standardInput: return "<stdin>"
        }
    }
}

/// Why a path given on the command line yielded no document.
public struct ENMLInputError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public var description: String { "\(path): error: \(reason)" }
}

/// The outcome for one source: its report, or the reason it could not be read.
public struct ENMLFileResult: Sendable, Equatable {
    public var source: ENMLSource
    public var outcome: Result<ENMLReport, ENMLInputError>

    public var path: String { source.displayName }
    public var isValid: Bool { (try? outcome.get())?.isValid ?? false }
}

/// Validates many documents at once on every core, one document per worker at a time, so memory
/// stays bounded by the few documents in flight rather than by the number of files.
public struct ENMLBatchValidator: Sendable {
    public static let fileExtension = "enml"
    private let validator: ENMLValidator

    public init(validator: ENMLValidator = ENMLValidator()) {
        self.validator = validator
    }

    /// Turns command-line paths into sources: `-` is standard input, a directory stands for every
    /// `*.enml` below it (sorted), anything else is a file. Paths that name nothing are kept as errors.
    public static func sources(for paths: [String]) -> [Result<ENMLSource, ENMLInputError>] {
        paths.flatMap { path -> [Result<ENMLSource, ENMLInputError>] in
            if path == "-" { return [.success(.standardInput)] }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                return [.failure(ENMLInputError(path: path, reason: "No such file or directory"))]
            }
            guard isDirectory.boolValue else { return [.success(.file(path))] }
            let files = notes(under: path)
            if files.isEmpty {
                return [.failure(ENMLInputError(path: path, reason: "directory holds no *.\(fileExtension) files"))]
            }
            return files.map { .success(.file($0)) }
        }
    }

    private static func notes(under directory: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        var found: [String] = []
        while let relative = walker.nextObject() as? String {
            if relative.hasSuffix("." + fileExtension) { found.append(prefix + relative) }
        }
        return found.sorted()
    }

    /// Validates what command-line paths name, in their order; paths naming nothing keep their error.
    public func validate(paths: [String]) -> [ENMLFileResult] {
        let resolved = Self.sources(for: paths)
        let readable = resolved.compactMap { try? $0.get() }
        var validated = validate(readable).makeIterator()
        return resolved.map { resolution in
            switch resolution {
            case .success: return validated.next()!
            case .failure(let error): return ENMLFileResult(source: .file(error.path), outcome: .failure(error))
            }
        }
    }

    /// Validates every source; results come back in the order given.
    public func validate(_ sources: [ENMLSource], standardInput: () -> Data = { FileHandle.standardInput.readDataToEndOfFile() }) -> [ENMLFileResult] {
        // Standard input can be read only once, and only from here.
        let stdinData = sources.contains(.standardInput) ? standardInput() : Data()
        let results = UnsafeMutableBufferPointer<ENMLFileResult?>.allocate(capacity: sources.count)
        results.initialize(repeating: nil)
        defer { results.deallocate() }
        let slots = SendableSlots(results)
        DispatchQueue.concurrentPerform(iterations: sources.count) { index in
            let source = sources[index]
            let outcome: Result<ENMLReport, ENMLInputError>
            switch source {
            case .standardInput:
                outcome = .success(validator.validate(stdinData))
            case .file(let path):
                outcome = Result { try FileBytes.read(path) }
                    .mapError { ENMLInputError(path: path, reason: ($0 as? FileBytes.ReadError)?.reason ?? "\($0)") }
                    .map { bytes in bytes.withUnsafeBufferPointer { validator.validate(bytes: $0) } }
            }
            slots.buffer[index] = ENMLFileResult(source: source, outcome: outcome)
        }
        return results.map { $0! }
    }
}

/// `@unchecked`: distinct workers write distinct slots of one buffer; no two touch the same index.
private struct SendableSlots: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<ENMLFileResult?>
    init(_ buffer: UnsafeMutableBufferPointer<ENMLFileResult?>) { self.buffer = buffer }
}
