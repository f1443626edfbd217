import Foundation
import Synchronization
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A document to validate: a file, or standard input (`-` on the command line).
package enum ENMLSource: Sendable, Equatable {
    case file(String)
    /// A file found in a directory whose name is not UTF-8 (a Latin-1 name from an old archive):
    /// kept as the bytes the file system gave, so it can still be opened.
    case undecodableFile([UInt8])
    case standardInput

    /// The path as a terminal can show it: control characters and bytes that are not UTF-8 are
    /// written as `\xNN`, so a name cannot move the cursor, clear the screen or forge a line.
    package var displayName: String {
        switch self {
        case .file(let path): return TerminalText.escaped(path)
        case .undecodableFile(let bytes): return TerminalText.escaped(bytes)
        case .standardInput: return "<stdin>"
        }
    }

    /// The path for a JSON consumer, whose strings carry any Unicode text unharmed.
    package var jsonName: String {
        switch self {
        case .file(let path): return path
        case .undecodableFile, .standardInput: return displayName
        }
    }
}

/// Why a path given on the command line yielded no document.
package struct ENMLInputError: Error, Sendable, Equatable, CustomStringConvertible {
    package var path: String
    package var reason: String

    package var description: String { "\(TerminalText.escaped(path)): error: \(reason)" }
}

/// The outcome for one source: its report, or the reason it could not be read.
package struct ENMLFileResult: Sendable, Equatable {
    package var source: ENMLSource
    package var outcome: Result<ENMLReport, ENMLInputError>

    /// The path as printed on a terminal (escaped).
    package var path: String { source.displayName }
    package var isValid: Bool { (try? outcome.get())?.isValid ?? false }
}

/// Validates many documents at once on every core, one document per worker at a time, so memory
/// stays bounded by the few documents in flight rather than by the number of files.
package struct ENMLBatchValidator: Sendable {
    package static let fileExtension = "enml"
    private let validator: ENMLValidator

    package init(validator: ENMLValidator = ENMLValidator()) {
        self.validator = validator
    }

    /// Turns command-line paths into sources: `-` is standard input, a directory stands for every
    /// `*.enml` below it (sorted), anything else is a file. Paths that name nothing are kept as errors.
    package static func sources(for paths: [String]) -> [Result<ENMLSource, ENMLInputError>] {
        sources(forPathBytes: paths.map { Array($0.utf8) })
    }

    /// As `sources(for:)`, the paths as the file system spells them (not necessarily UTF-8:
    /// such a name is opened by its bytes and shown with the bad ones as `\xNN`).
    package static func sources(forPathBytes paths: [[UInt8]]) -> [Result<ENMLSource, ENMLInputError>] {
        paths.flatMap { bytes -> [Result<ENMLSource, ENMLInputError>] in
            if bytes == [UInt8(ascii: "-")] { return [.success(.standardInput)] }
            let named = String(validating: bytes, as: UTF8.self).map(ENMLSource.file) ?? .undecodableFile(bytes)
            let path = named.displayName
            var status = stat()
            guard !bytes.contains(0), (bytes + [0]).withUnsafeBufferPointer({
                stat(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), &status)
            }) == 0 else {
                return [.failure(ENMLInputError(path: path, reason: String(cString: strerror(bytes.contains(0) ? EINVAL : errno))))]
            }
            guard (status.st_mode & S_IFMT) == S_IFDIR else { return [.success(named)] }
            let (files, unreadable) = notes(under: bytes)
            // A folder that cannot be listed is a failure of its own, never "all valid" in silence.
            let failures = unreadable.map { Result<ENMLSource, ENMLInputError>.failure($0) }
            if files.isEmpty && unreadable.isEmpty {
                return [.failure(ENMLInputError(path: path, reason: "directory holds no *.\(fileExtension) files"))]
            }
            return failures + files.map { bytes in
                let source = String(validating: bytes, as: UTF8.self).map(ENMLSource.file) ?? .undecodableFile(bytes)
                // A FIFO or device that happens to be named *.enml is no note: reading it could
                // wait for a writer or never end, and the other files are not to wait for it.
                if let kind = FileBytes.specialFileKind(pathBytes: bytes) {
                    return .failure(ENMLInputError(path: source.jsonName, reason: "not a regular file (\(kind)); skipped"))
                }
                return .success(source)
            }
        }
    }

    /// Every `*.enml` file below `directory`, sorted, as the file system spells the names
    /// (`FolderWalk`: a name that is not UTF-8 has no String that opens it again).
    /// Symbolic links to directories are not followed (no cycles); links to files are kept.
    /// A subfolder that cannot be listed, or an entry that cannot be looked at, is an error of its
    /// own (in name order, before the files).
    private static func notes(under directory: [UInt8]) -> (files: [[UInt8]], unreadable: [ENMLInputError]) {
        let suffix = Array(".\(fileExtension)".utf8)
        var found: [[UInt8]] = []
        var unreadable: [ENMLInputError] = []
        func failure(_ path: [UInt8], _ reason: String) -> ENMLInputError {
            let source = String(validating: path, as: UTF8.self).map(ENMLSource.file) ?? .undecodableFile(path)
            return ENMLInputError(path: source.jsonName, reason: reason)
        }
        FolderWalk.walk(directory) { event in
            switch event {
            case .unlistableFolder(let folder, let reason):
                let shown = folder.count > 1 && folder.last == UInt8(ascii: "/") ? Array(folder.dropLast()) : folder
                unreadable.append(failure(shown, "cannot list the directory: \(reason)"))
            case .unreadableEntry(let path, _, let reason):
                unreadable.append(failure(path, reason))
            case .entry(let path, let name, let status):
                if status.st_mode & S_IFMT != S_IFDIR, name.count > suffix.count, name.suffix(suffix.count).elementsEqual(suffix) {
                    found.append(path)
                }
            }
        }
        return (found.sorted { $0.lexicographicallyPrecedes($1) }, unreadable.sorted { $0.path < $1.path })
    }

    /// Validates what command-line paths name, in their order; paths naming nothing keep their error.
    package func validate(paths: [String]) -> [ENMLFileResult] {
        validate(pathBytes: paths.map { Array($0.utf8) })
    }

    /// As `validate(paths:)`, the paths as bytes (`sources(forPathBytes:)`).
    package func validate(pathBytes paths: [[UInt8]]) -> [ENMLFileResult] {
        let resolved = Self.sources(forPathBytes: paths)
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
    package func validate(_ sources: [ENMLSource]) -> [ENMLFileResult] {
        // Standard input can be read only once, and only from here.
        let stdinData = sources.contains(.standardInput)
            ? Result { () throws(FileBytes.ReadError) in try FileBytes.readStandardInput(limit: .enmlNote) }
                .mapError { ENMLInputError(path: ENMLSource.standardInput.displayName, reason: $0.reason) }
            : .success([])
        let slots = ResultSlots(count: sources.count)
        ParallelWork.forEach(sources.count) { index in
            let source = sources[index]
            let outcome: Result<ENMLReport, ENMLInputError>
            switch source {
            case .standardInput:
                outcome = stdinData.map { bytes in bytes.withUnsafeBufferPointer { validator.validate(bytes: $0) } }
            case .file(let path):
                outcome = Self.validateFile(at: Array(path.utf8), shownAs: path, with: validator)
            case .undecodableFile(let bytes):
                outcome = Self.validateFile(at: bytes, shownAs: source.displayName, with: validator)
            }
            slots.put(ENMLFileResult(source: source, outcome: outcome), at: index)
        }
        return slots.all
    }
}

extension ENMLBatchValidator {
    fileprivate static func validateFile(at path: [UInt8], shownAs name: String, with validator: ENMLValidator) -> Result<ENMLReport, ENMLInputError> {
        Result { () throws(FileBytes.ReadError) in try FileBytes.read(pathBytes: path, limit: .enmlNote).bytes }
            .mapError { ENMLInputError(path: name, reason: $0.reason) }
            .map { bytes in bytes.withUnsafeBufferPointer { validator.validate(bytes: $0) } }
    }
}

/// The results of the workers, each in its source's slot. A lock per file costs nothing beside
/// validating it (bench/validate).
private final class ResultSlots: Sendable {
    private let slots: Mutex<[ENMLFileResult?]>

    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

    func put(_ result: ENMLFileResult, at index: Int) {
        slots.withLock { $0[index] = result }
    }

    /// Every slot, once all are filled.
    var all: [ENMLFileResult] { slots.withLock { $0.map { $0! } } }
}
