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
/// takes back what it added; other files go on.
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
        /// Why the file added nothing, when it did not.
        package var error: HistoryImportError?
        /// A file found in a folder or an archive that is no location history: passed over.
        package var passedOver = false
        /// Members of an archive passed over for the same reason.
        package var membersPassedOver = 0
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
        for input in inputs {
            var status = stat()
            if stat(input, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
                let files = HistoryFolder.files(in: input)
                for file in files { report(importFile(file, named: true, inFolder: true)) }
                if files.isEmpty {
                    report(FileReport(path: input, error: .unreadable(path: input, detail: "the folder holds no file")))
                }
            } else {
                report(importFile(input, named: true, inFolder: false))
            }
        }
    }

    private func importFile(_ path: String, named: Bool, inFolder: Bool) -> FileReport {
        do {
            let source = try HistoryFileSource(path: path)
            let prefix = try Self.prefix(of: source)
            if HistoryArchive.recognizes(prefix[...]) {
                return try importArchive(path)
            }
            return importStream(source, prefix: prefix, path: path, size: source.stream.size, inContainer: inFolder)
        } catch {
            return FileReport(path: path, error: error)
        }
    }

    /// Every member of a zip archive; members of no known format are passed over.
    private func importArchive(_ path: String) throws(HistoryImportError) -> FileReport {
        let archive = try HistoryArchive(path: path)
        var total = FileReport(path: path)
        var imported = 0
        var failures: [FileReport] = []
        while let member = try archive.nextMember() {
            let source = HistoryArchiveMember(archive: archive, member: member)
            let name = path + "!" + member
            let report = importStream(source, prefix: try Self.prefix(of: source), path: name, size: nil, inContainer: true)
            if report.error != nil { failures.append(report) }
            if report.passedOver { total.membersPassedOver += 1 }
            guard !report.passedOver, report.error == nil else { continue }
            imported += 1
            total.format = total.format ?? report.format
            total.read += report.read
            total.added += report.added
            total.alreadyThere += report.alreadyThere
            total.visitsRead += report.visitsRead
            total.visitsAdded += report.visitsAdded
            total.skipped.merge(report.skipped, uniquingKeysWith: +)
            total.fixes += report.fixes
        }
        if let failure = failures.first { return failure }
        if imported == 0 { throw .unknownFormat(path: path, detail: "the zip archive holds no file of a format enlog reads") }
        return total
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
            report.error = .badFile(path: path, format: kind.format, error: HistoryFileError(error.reason))
            return report
        }
        var batch = HistoryBatch(collectFixes: collectFixes)
        progress?.startFile(path, size: size)
        do {
            try reader.feed(content) { batch.take($0) }
            var done = prefix.count
            try batch.flushIfFull(writer, into: &report, progress: progress, bytes: done)
            while true {
                let chunk = try source.read(upTo: Self.chunkSize)
                if chunk.isEmpty { break }
                done += chunk.count
                if transcoder != nil {
                    try reader.feed(try transcoder!.feed(chunk[...])[...]) { batch.take($0) }
                } else {
                    try reader.feed(chunk[...]) { batch.take($0) }
                }
                try batch.flushIfFull(writer, into: &report, progress: progress, bytes: done)
            }
            if transcoder != nil { try reader.feed(try transcoder!.finish()[...]) { batch.take($0) } }
            try reader.finish { batch.take($0) }
            try batch.flush(writer, into: &report)
            if report.read == 0 && report.visitsRead == 0 {
                throw HistoryImportError.nothingToImport(path: path, format: kind.format, skipped: report.skipped)
            }
            try writer.finish()
            report.fixes = batch.fixes
        } catch {
            // The file adds nothing: what its chunks added so far is taken back.
            try? writer.abandon()
            switch error {
            case let error as HistoryImportError: report.error = error
            case let error as HistoryFileError: report.error = .badFile(path: path, format: kind.format, error: error)
            case let error as any ENLogError: report.error = .badFile(path: path, format: kind.format, error: HistoryFileError(error.reason))
            default: report.error = .badFile(path: path, format: kind.format, error: HistoryFileError("\(error)"))
            }
            report.added = 0
            report.fixes = []
        }
        progress?.endFile()
        return report
    }

    /// What names a file across runs, so a rerun finds the runs a killed import left: the
    /// absolute path (an archive member: the archive's, then `!member`).
    static func identity(of path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
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
        case .skipped(let reason): skipped[reason, default: 0] += 1
        }
    }

    /// Writes full transactions (exactly `pointsPerTransaction` points each) while there are.
    mutating func flushIfFull(_ writer: HistoryImportWriter, into report: inout HistoryImport.FileReport,
                              progress: HistoryImportProgress?, bytes: Int) throws {
        let size = HistoryImport.pointsPerTransaction
        while points.count >= size || visits.count >= size {
            try write(Array(points.prefix(size)), Array(visits.prefix(size)), writer, into: &report)
            points.removeFirst(min(size, points.count))
            visits.removeFirst(min(size, visits.count))
        }
        progress?.update(bytes: bytes, points: report.read + points.count)
    }

    /// Writes what is left (the file has ended).
    mutating func flush(_ writer: HistoryImportWriter, into report: inout HistoryImport.FileReport) throws {
        try flushIfFull(writer, into: &report, progress: nil, bytes: 0)
        try write(points, visits, writer, into: &report)
        points.removeAll()
        visits.removeAll()
    }

    private mutating func write(_ points: [HistoryPoint], _ visits: [HistoryVisit], _ writer: HistoryImportWriter,
                                into report: inout HistoryImport.FileReport) throws {
        let counts = try writer.add(points: points, visits: visits)
        report.read += points.count
        report.added += counts.added
        report.alreadyThere += counts.alreadyThere
        report.visitsRead += visits.count
        report.visitsAdded += counts.visitsAdded
        report.skipped.merge(skipped, uniquingKeysWith: +)
        skipped.removeAll()
    }
}
