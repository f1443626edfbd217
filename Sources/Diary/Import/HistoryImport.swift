import Foundation
import Support
import Capture
import Outbox

/// `enlog import FILE…`: location histories of other programs into enlog's history, streamed.
///
/// Each input is a file, a folder (every file in it, recursively) or a zip archive (a Takeout
/// download: every member). Its format is told by content: the first 64 KiB (a UTF-8 byte
/// order mark removed) go to each reader of `HistoryReaders.all` in turn, the first that
/// recognizes them reads the file. The file is then fed to that reader 1 MiB at a time and its
/// points are written 10,000 to a transaction (`HistoryImportWriter`), so memory stays bounded
/// whatever the file's size and a killed import leaves whole chunks. A file that turns out bad
/// takes back what it added; other files go on. A file that by its nature holds no point (a
/// Timeline Edits file of place aggregates, Takeout's `Settings.json`, `archive_browser.html`)
/// is reported as having nothing to import, which is no failure. A zip archive's members are
/// reported one by one, as a folder's files are.
package struct HistoryImport {
    /// What one file gave.
    package struct FileReport: Sendable {
        package var path: String
        package var format: HistoryFormat?
        package var read = 0
        package var added = 0
        package var alreadyThere = 0
        package var skipped: [HistorySkip: Int] = [:]
        package var visitsRead = 0
        package var visitsAdded = 0
        /// The source's own stretches of movement (`HistorySegment`): with their distance, mode and waypoints.
        package var movesRead = 0
        package var movesAdded = 0
        /// Why the file added nothing, when it did not.
        package var error: HistoryImportError?
        /// What the file holds instead of points, when by its nature it holds none: nothing to
        /// import, and no failure.
        package var nothingToImport: String?
        /// A file found in a folder or an archive that is no location history: passed over.
        package var passedOver = false
        /// With `collectFixes` (`--notes`): the file's fixes, in order.
        package var fixes: [Fix] = []
    }

    package static let chunkSize = 1 << 20
    package static let pointsPerTransaction = 10_000

    let outbox: OutboxStore
    let progress: HistoryImportProgress?
    /// Keep every file's fixes for `--notes`, which walks the track as `watch` would.
    let collectFixes: Bool

    package init(outbox: OutboxStore, progress: HistoryImportProgress?, collectFixes: Bool = false) {
        self.outbox = outbox
        self.progress = progress
        self.collectFixes = collectFixes
    }

    /// Every input in order; `report` is called once per file as soon as it is done.
    package func run(_ inputs: [String], report: (FileReport) -> Void) {
        run(paths: inputs.map { Array($0.utf8) }, report: report)
    }

    /// Every input, named as the file system spells it (not necessarily UTF-8), in order;
    /// `report` is called once per file as soon as it is done. A report's `path` shows the
    /// name with bytes that are not UTF-8 as `\xNN`.
    package func run(paths inputs: [[UInt8]], report: (FileReport) -> Void) {
        for input in inputs {
            if HistoryPath.isDirectory(input) {
                let listing = HistoryFolder.files(in: input)
                for failure in listing.unreadable { report(FileReport(path: failure.path, error: failure.error)) }
                var readSomething = false
                for file in listing.files {
                    importFile(file, inFolder: true) { fileReport in
                        if !fileReport.passedOver { readSomething = true }
                        report(fileReport)
                    }
                }
                // Nothing read and nothing failed: said, whether the folder is empty or holds only other files.
                if listing.unreadable.isEmpty, !readSomething {
                    let shown = HistoryPath.shown(input)
                    report(FileReport(path: shown, error: .noHistoryInFolder(path: shown, passedOver: listing.files.count)))
                }
            } else {
                importFile(input, inFolder: false, report: report)
            }
        }
    }

    private func importFile(_ bytes: [UInt8], inFolder: Bool, report: (FileReport) -> Void) {
        let path = HistoryPath.shown(bytes)
        do {
            let source = try HistoryFileSource(path: bytes, name: path)
            let prefix = try Self.prefix(of: source)
            if HistoryArchive.recognizes(prefix[...]) {
                return try importArchive(bytes, shownAs: path, report: report)
            }
            report(importStream(source, prefix: prefix, path: path, size: source.stream.size, inContainer: inFolder))
        } catch {
            report(FileReport(path: path, error: error))
        }
    }

    /// Every member of a zip archive, each reported as a file of a folder is (`archive!member`);
    /// members of no known format are passed over. An archive that cannot be read further, or
    /// holds nothing enlog knows, is reported as itself failing, after the members read so far.
    private func importArchive(_ bytes: [UInt8], shownAs path: String, report: (FileReport) -> Void) throws(HistoryImportError) {
        let archive = try HistoryArchive(bytes: bytes, path: path)
        var known = 0
        while let member = try archive.nextMember() {
            let source = HistoryArchiveMember(archive: archive, member: member)
            let name = path + "!" + member
            let file = importStream(source, prefix: try Self.prefix(of: source), path: name, size: nil, inContainer: true)
            if !file.passedOver { known += 1 }
            report(file)
        }
        if known == 0 { throw .unknownFormat(path: path, detail: "the zip archive holds no file of a format enlog reads") }
    }

    /// The first bytes of `source`, up to the sniffing length.
    private static func prefix(of source: some HistoryByteSource) throws(HistoryImportError) -> [UInt8] {
        var prefix: [UInt8] = []
        while prefix.count < HistoryReaders.prefixLength {
            let chunk = try source.read(upTo: HistoryReaders.prefixLength - prefix.count)
            if chunk.isEmpty { break }
            prefix += chunk
        }
        return prefix
    }

    private func importStream(_ source: some HistoryByteSource, prefix: [UInt8], path: String, size: Int?,
                              inContainer: Bool) -> FileReport {
        var report = FileReport(path: path)
        // UTF-16 is read as the UTF-8 it transcodes to, as it is fed.
        var transcoder = UTF16Transcoder(detecting: prefix[...])
        var prefix = prefix
        if transcoder != nil {
            do {
                prefix = try transcoder!.feed(prefix[...])
            } catch {
                report.error = .unknownFormat(path: path, detail: "it is \(transcoder!.encodingName) text, but \(error.reason) at byte \(Self.byte(error))")
                return report
            }
        }
        let content = HistoryReaders.withoutByteOrderMark(prefix[...])
        guard !content.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
            report.passedOver = inContainer
            if !inContainer { report.error = .empty(path: path) }
            return report
        }
        guard let kind = HistoryReaders.kind(for: content) else {
            if let holds = Self.holdsNoHistory(content) {
                report.nothingToImport = holds
                return report
            }
            report.passedOver = inContainer
            if !inContainer { report.error = .unknownFormat(path: path, detail: Self.describe(content)) }
            return report
        }
        report.format = kind.format
        source.knowsWhatItReads()
        var reader = kind.make(path)
        let writer: HistoryImportWriter
        do {
            writer = try HistoryImportWriter(store: outbox, path: Self.identity(of: path), format: kind.format.rawValue)
        } catch {
            report.error = .outbox(path: path, error: error)
            return report
        }
        var batch = HistoryBatch(collectFixes: collectFixes)
        let queue = HistoryWriteQueue(writer: writer)
        progress?.startFile(path, size: size)
        do {
            try reader.feed(content) { batch.take($0) }
            var done = prefix.count
            try batch.flushIfFull(queue, into: &report, progress: progress, bytes: done)
            while true {
                let chunk = try source.read(upTo: Self.chunkSize)
                if chunk.isEmpty { break }
                done += chunk.count
                if transcoder != nil {
                    try reader.feed(try transcoder!.feed(chunk[...])[...]) { batch.take($0) }
                } else {
                    try reader.feed(chunk[...]) { batch.take($0) }
                }
                try batch.flushIfFull(queue, into: &report, progress: progress, bytes: done)
            }
            if transcoder != nil { try reader.feed(try transcoder!.finish()[...]) { batch.take($0) } }
            try reader.finish { batch.take($0) }
            try batch.flush(queue, into: &report)
            let counts = try queue.finish()
            report.added = counts.added
            report.alreadyThere = counts.alreadyThere
            report.visitsAdded = counts.visitsAdded
            report.movesAdded = counts.segmentsAdded
            if report.read == 0 && report.visitsRead == 0 && report.movesRead == 0 {
                throw HistoryImportError.nothingToImport(path: path, format: kind.format, skipped: report.skipped)
            }
            try writer.finish()
            report.fixes = batch.fixes
        } catch {
            // The file adds nothing: what its chunks added so far is taken back, once the chunk
            // being written (if any) is in.
            queue.stop()
            try? writer.abandon()
            switch error {
            case let error as HistoryImportError: report.error = error
            case let error as OutboxError: report.error = .outbox(path: path, error: error)
            case let error as HistoryFileError: report.error = .badFile(path: path, format: kind.format, error: error)
            case let error as any ENLogError: report.error = .badFile(path: path, format: kind.format, error: HistoryFileError(error.reason))
            default: report.error = .badFile(path: path, format: kind.format, error: HistoryFileError("\(error)"))
            }
            report.added = 0
            report.fixes = []
            if case .badFile(_, _, let cause)? = report.error, cause.holdsNoPoints {
                report.error = nil
                report.nothingToImport = cause.reason
            }
        }
        progress?.endFile()
        return report
    }

    /// What names a file across runs, so a rerun finds the runs a killed import left: the
    /// absolute path (an archive member: the archive's, then `!member`).
    static func identity(of path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        // getcwd's bytes, shown as the paths are: FileManager would repair a folder name that
        // is not UTF-8 into another (and the same for every such folder).
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return FileManager.default.currentDirectoryPath + "/" + path }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return HistoryPath.shown(bytes) + "/" + path
    }

    /// What a file of a kind that holds no location history by its nature holds instead, told by
    /// its content: Takeout's `Settings.json` (its devices' settings), a web page (Takeout's
    /// `archive_browser.html`). Nil for anything else, which stays unknown.
    static func holdsNoHistory(_ content: ArraySlice<UInt8>) -> String? {
        let text = content.drop { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if text.first == UInt8(ascii: "{"), Self.hasList(text, named: #""deviceSettings""#) {
            return "Google's Location History settings (Settings.json: devices, no points)"
        }
        let start = String(decoding: text.prefix(15), as: UTF8.self).lowercased()
        if start.hasPrefix("<!doctype html") || start.hasPrefix("<html") {
            return "a web page, no points (Takeout's archive_browser.html is one)"
        }
        return nil
    }

    /// Whether the document's top-level object has `key` (quoted) with a list for its value, as
    /// Settings.json has `"deviceSettings": [`. Only the top level counts: a JSON Schema of that
    /// file names the key with an object there, and holds such a list only in a nested example.
    private static func hasList(_ bytes: ArraySlice<UInt8>, named key: String) -> Bool {
        let needle = Array(key.utf8), space: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        var depth = 0, index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                // A string: at the top level, perhaps the key.
                let start = index
                index = bytes.index(after: index)
                while index < bytes.endIndex, bytes[index] != UInt8(ascii: "\"") {
                    index = bytes.index(index, offsetBy: bytes[index] == UInt8(ascii: "\\") ? 2 : 1, limitedBy: bytes.endIndex) ?? bytes.endIndex
                }
                guard index < bytes.endIndex else { return false }
                index = bytes.index(after: index)
                if depth == 1, bytes[start..<index].elementsEqual(needle) {
                    let rest = bytes[index...].drop { space.contains($0) }
                    if rest.first == UInt8(ascii: ":"), rest.dropFirst().drop(while: { space.contains($0) }).first == UInt8(ascii: "[") {
                        return true
                    }
                }
                continue
            }
            if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") { depth += 1 }
            if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") { depth -= 1 }
            index = bytes.index(after: index)
        }
        return false
    }

    private static func byte(_ error: HistoryFileError) -> Int {
        if case .byte(let offset) = error.place { return offset }
        return 0
    }

    /// A few words on what a file of no known format starts with, for its error.
    static func describe(_ content: ArraySlice<UInt8>) -> String {
        if let root = XMLStream.rootName(content) { return "it is XML with the root element <\(root)>" }
        if content.starts(with: Array(".FIT".utf8)) || (content.count > 11 && content.dropFirst(8).prefix(4).elementsEqual(".FIT".utf8)) {
            return "it is a Garmin FIT file (convert it: gpsbabel -i garmin_fit -f FILE -o gpx -F FILE.gpx)"
        }
        let first = content.drop { [0x20, 0x09, 0x0A, 0x0D].contains($0) }.first
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") { return "JSON of no known location history layout" }
        if content.contains(0) { return "binary data" }
        return "it starts with '\(TerminalText.oneLine(String(decoding: content.prefix(40), as: UTF8.self)))'"
    }
}

/// Items read but not yet written: at most a transaction's worth plus what one chunk gave.
struct HistoryBatch {
    var points: [HistoryPoint] = []
    var visits: [HistoryVisit] = []
    var segments: [HistorySegment] = []
    var skipped: [HistorySkip: Int] = [:]
    let collectFixes: Bool
    var fixes: [Fix] = []

    init(collectFixes: Bool) {
        self.collectFixes = collectFixes
    }

    mutating func take(_ item: HistoryItem) {
        switch item {
        case .point(let point):
            points.append(point)
            if collectFixes { fixes.append(point.fix) }
        case .visit(let visit): visits.append(visit)
        case .segment(let segment): segments.append(segment)
        case .skipped(let reason): skipped[reason, default: 0] += 1
        }
    }

    /// Hands on full transactions (exactly `pointsPerTransaction` points each) while there are.
    mutating func flushIfFull(_ queue: HistoryWriteQueue, into report: inout HistoryImport.FileReport,
                              progress: HistoryImportProgress?, bytes: Int) throws {
        let size = HistoryImport.pointsPerTransaction
        while points.count >= size || visits.count >= size || segments.count >= size {
            try write(Array(points.prefix(size)), Array(visits.prefix(size)), Array(segments.prefix(size)), queue, into: &report)
            points.removeFirst(min(size, points.count))
            visits.removeFirst(min(size, visits.count))
            segments.removeFirst(min(size, segments.count))
        }
        progress?.update(bytes: bytes, points: report.read + points.count)
    }

    /// Hands on what is left (the file has ended).
    mutating func flush(_ queue: HistoryWriteQueue, into report: inout HistoryImport.FileReport) throws {
        try flushIfFull(queue, into: &report, progress: nil, bytes: 0)
        try write(points, visits, segments, queue, into: &report)
        points.removeAll()
        visits.removeAll()
        segments.removeAll()
    }

    private mutating func write(_ points: [HistoryPoint], _ visits: [HistoryVisit], _ segments: [HistorySegment],
                                _ queue: HistoryWriteQueue, into report: inout HistoryImport.FileReport) throws {
        try queue.submit(HistoryWriteQueue.Chunk(points: points, visits: visits, segments: segments))
        report.read += points.count
        report.visitsRead += visits.count
        report.movesRead += segments.count
        report.skipped.merge(skipped, uniquingKeysWith: +)
        skipped.removeAll()
    }
}

/// Writes a file's chunks, each its own transaction, on a thread of its own while the file is
/// read on: parsing and SQLite's work overlap on two cores (`bench/import`). One chunk waits at
/// most while another is written, so memory stays bounded; chunks are written in order, so a
/// killed import still leaves whole chunks from the file's start.
/// `@unchecked`: its state is read and written only under `condition`'s lock, and the writer (an
/// SQLite connection, not Sendable) is used only by the writing thread after `init`.
final class HistoryWriteQueue: @unchecked Sendable {
    struct Chunk: Sendable {
        var points: [HistoryPoint]
        var visits: [HistoryVisit]
        var segments: [HistorySegment]
        var isEmpty: Bool { points.isEmpty && visits.isEmpty && segments.isEmpty }
    }

    private let writer: HistoryImportWriter
    /// Guards everything below.
    private let condition = NSCondition()
    private var waiting: Chunk?
    private var closed = false
    private var ended = false
    private var failure: (any Error)?
    private var counts = HistoryImportWriter.Counts()

    init(writer: HistoryImportWriter) {
        self.writer = writer
        let thread = Thread { [self] in write() }
        thread.name = "enlog.import.write"
        thread.start()
    }

    /// Queues a chunk, waiting while the one before it has not been taken; throws what the
    /// writing failed with, if it did.
    func submit(_ chunk: Chunk) throws {
        guard !chunk.isEmpty else { return }
        condition.lock()
        defer { condition.unlock() }
        while waiting != nil, failure == nil { condition.wait() }
        if let failure { throw failure }
        waiting = chunk
        condition.broadcast()
    }

    /// Waits until every chunk queued is written: their counts, or the first failure.
    func finish() throws -> HistoryImportWriter.Counts {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        condition.broadcast()
        while !ended { condition.wait() }
        if let failure { throw failure }
        return counts
    }

    /// Drops the chunk waiting, if any, and waits for the one being written: after it, nothing
    /// more is written.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        waiting = nil
        closed = true
        condition.broadcast()
        while !ended { condition.wait() }
    }

    private func write() {
        while true {
            condition.lock()
            while waiting == nil, !closed { condition.wait() }
            guard let chunk = waiting else {
                ended = true
                condition.broadcast()
                condition.unlock()
                return
            }
            waiting = nil
            condition.broadcast()
            condition.unlock()
            do {
                let written = try writer.add(points: chunk.points, visits: chunk.visits, segments: chunk.segments)
                condition.lock()
                counts += written
                condition.unlock()
            } catch {
                condition.lock()
                failure = error
                ended = true
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }
}
