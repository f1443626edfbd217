import Foundation
import Support
import Configuration
import Network

/// Turns NMEA 0183 lines into fixes, in order, one receiver cycle (epoch) at a time.
///
/// Feed it lines with `read(line:)` and call `finish()` at the end of the input; each returns the
/// fixes that became complete. A log and a live replay go through the same code.
///
/// How sentences become epochs, the way gpsd reads real receivers:
/// - A sentence with a time belongs to the epoch of that time: GGA, RMC, GLL, GNS, GST and ZDA of
///   one cycle merge into one fix, whatever their talker (GP, GN, GL, GA, GB, EC…).
/// - A position sentence without a time (`$GPGGA,,,,,,0,…`, `$GPRMC,,V,…` from a receiver that has
///   lost its fix) is a cycle of its own: it never merges into a neighbouring timed epoch, so the
///   fixes before and after an outage keep their own verdict.
/// - GSA carries no time and speaks only for the dimension (2D drops the altitude) and HDOP of the
///   epoch being read; its "no fix" mode is the next cycle's and never undoes a timed fix.
/// - Only RMC and ZDA carry a date; it is carried to the epochs around them, rolling over at
///   midnight. Fixes seen before the first date wait for it (a log without any yields none).
package struct NMEAFixReader: Sendable {
    package private(set) var statistics = NMEALogStatistics()
    private var current: Epoch?
    private var dating = Dating()
    /// The last epoch with a valid position, dated or not (for errors and comparisons).
    private(set) var lastValidEpoch: Epoch?

    package init() {}

    /// Reads one line (without or with its line ending) and returns the fixes it completed.
    package mutating func read(line: some Collection<UInt8>) -> [Fix] {
        statistics.lines += 1
        let lineNumber = statistics.lines
        switch NMEALine(ArraySlice(line)) {
        case .blank:
            return []
        case .noise:
            statistics.noiseLines += 1
            return []
        case .badChecksum:
            statistics.badChecksums += 1
            if statistics.firstBadChecksumLine == nil { statistics.firstBadChecksumLine = lineNumber }
            return []
        case let .sentence(sentence):
            statistics.sentences += 1
            return apply(NMEAReport(sentence), of: sentence, line: lineNumber)
        }
    }

    /// The fixes still held at the end of the input: the last epoch.
    package mutating func finish() -> [Fix] {
        guard let last = current else { return [] }
        current = nil
        return close(last)
    }

    private mutating func apply(_ report: NMEAReport, of sentence: NMEASentence, line: Int) -> [Fix] {
        var completed: [Fix] = []
        switch report {
        case .unread:
            statistics.unreadSentences[String(sentence.address), default: 0] += 1
        case let .invalid(problem):
            statistics.invalidSentences += 1
            if statistics.firstInvalidSentence == nil {
                statistics.firstInvalidSentence = .init(line: line, problem: "\(sentence.address): \(problem)")
            }
        case let .position(position):
            statistics.positionSentences += 1
            if position.verdict == .fix { statistics.positionSentencesWithFix += 1 }
            completed = enterEpoch(at: position.timeOfDay, isPosition: true)
            if current?.line == nil { current?.line = line }
            current?.merge(position)
        case let .dilution(mode, hdop):
            // Mode 1 (no fix) is a time-less no-fix report, and its DOPs are placeholders (99.99).
            guard mode != 1 else { break }
            if current == nil { current = Epoch() }
            if mode == 2 { current?.isTwoDimensional = true }
            if let hdop { current?.hdop = hdop }
        case let .accuracy(time, metres):
            completed = enterEpoch(at: time, isPosition: false)
            current?.measuredHorizontalError = metres
        case let .date(time, date):
            completed = enterEpoch(at: time, isPosition: false)
            current?.date = date
        }
        return completed
    }

    /// Makes `current` the epoch a sentence with this time (or none) belongs to, closing the one
    /// before when it is another cycle.
    private mutating func enterEpoch(at time: Int?, isPosition: Bool) -> [Fix] {
        if let epoch = current {
            switch (epoch.timeOfDay, time) {
            case let (epochTime?, time?) where epochTime == time:
                return []
            case (nil, _?) where !epoch.hasPositionSentence:
                // Only time-less GSA so far: the cycle's first timed sentence names it.
                current?.timeOfDay = time
                return []
            case (_, nil) where !isPosition:
                return []
            case (nil, nil) where !epoch.hasPositionSentence || epoch.saysNoFix:
                return []
            default:
                break
            }
        }
        let closed = current.map { close($0) } ?? []
        current = Epoch(timeOfDay: time)
        return closed
    }

    private mutating func close(_ epoch: Epoch) -> [Fix] {
        if epoch.isValidFix {
            statistics.validEpochs += 1
            lastValidEpoch = epoch
        }
        let fixes = dating.date(epoch)
        statistics.fixes += fixes.count
        // A cycle whose values no fix may hold (an altitude of 99,999,999 m) is an invalid
        // position, reported as the sentences with impossible content are.
        for refusal in dating.refusals {
            statistics.invalidSentences += 1
            statistics.refusedFixes += 1
            if statistics.firstInvalidSentence == nil {
                statistics.firstInvalidSentence = .init(line: refusal.line ?? statistics.lines, problem: refusal.error.reason)
            }
        }
        dating.refusals = []
        return fixes
    }
}

/// What a reader saw, by kind, to explain a log that gives no fix.
package struct NMEALogStatistics: Sendable, Equatable {
    package struct Problem: Sendable, Equatable {
        package var line: Int
        package var problem: String
    }

    package var lines = 0
    /// Sentences whose checksum matched.
    package var sentences = 0
    package var badChecksums = 0
    package var firstBadChecksumLine: Int?
    /// Lines holding no sentence (fragments, junk before a `$`).
    package var noiseLines = 0
    /// Sentences of types enlog does not read, by address (`GPGSV`, `PERC`, `AIVDM`…).
    package var unreadSentences: [String: Int] = [:]
    /// Sentences with a matching checksum but impossible content (a latitude of 99°).
    package var invalidSentences = 0
    package var firstInvalidSentence: Problem?
    /// GGA, RMC, GLL and GNS sentences read, and how many of them reported a fix.
    package var positionSentences = 0
    package var positionSentencesWithFix = 0
    /// Epochs with a valid position, and how many of them became dated fixes.
    package var validEpochs = 0
    /// Dated epochs whose values no fix may hold (`Fix.Limits`), counted among the invalid too.
    package var refusedFixes = 0
    package var fixes = 0

    /// The unread sentence kinds, most frequent first: "PERC 34, GPGSV 5".
    package var unreadSummary: String {
        unreadSentences.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
            .prefix(5).map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}

/// One receiver cycle: everything its sentences said.
struct Epoch: Sendable {
    var timeOfDay: Int?            // milliseconds since UTC midnight
    var date: DateComponents?      // from RMC or ZDA
    var latitude: Double?
    var longitude: Double?
    var altitude: Double?
    var hdop: Double?
    var measuredHorizontalError: Double?
    var speed: Double?
    var course: Double?
    var saysFix = false
    var saysNoFix = false
    var hasPositionSentence = false
    var isTwoDimensional = false
    /// The line of the cycle's first position sentence.
    var line: Int?

    init(timeOfDay: Int? = nil) {
        self.timeOfDay = timeOfDay
    }

    /// Valid when a position sentence reported a fix and none of the cycle's reported its loss.
    var isValidFix: Bool { saysFix && !saysNoFix && latitude != nil && longitude != nil }

    /// Later sentences of a cycle refine earlier ones, as in gpsd.
    mutating func merge(_ report: NMEAPositionReport) {
        hasPositionSentence = true
        switch report.verdict {
        case .fix:
            saysFix = true
            latitude = report.latitude
            longitude = report.longitude
        case .noFix:
            saysNoFix = true
        case .unfounded:
            break
        }
        if let altitude = report.altitude { self.altitude = altitude }
        if let hdop = report.hdop { self.hdop = hdop }
        if let speed = report.speed { self.speed = speed }
        if let course = report.course { self.course = course }
        if let date = report.date { self.date = date }
    }

    /// The cycle's fix, or why its values make none (`Fix.Limits`); nil when it had no fix.
    func fix(at timestamp: Date) -> Result<Fix, LocationError>? {
        guard isValidFix, let latitude, let longitude else { return nil }
        let accuracy = measuredHorizontalError ?? hdop.map { $0 * NMEALogLocation.metresPerHDOP }
        return Result { () throws(LocationError) -> Fix in
            try Fix(latitude: latitude, longitude: longitude, altitude: isTwoDimensional ? nil : altitude,
                    horizontalAccuracy: accuracy, speed: speed, course: course, timestamp: timestamp, source: .nmea)
        }
    }
}

/// Gives epochs their date: their own (RMC, ZDA), else the last one seen, rolling over at midnight
/// when the time of day goes back by more than half a day. Valid epochs before the first date are
/// held and dated backwards from it.
struct Dating: Sendable {
    private static let dayLength = 86_400_000
    private var dayStart: Date?
    private var previousTime: Int?
    private var waiting: [Epoch] = []
    /// Why cycles with a fix were refused since the caller last took them, with their lines.
    var refusals: [(line: Int?, error: LocationError)] = []

    private mutating func keep(_ epoch: Epoch, at timestamp: Date, in fixes: inout [Fix]) {
        switch epoch.fix(at: timestamp) {
        case .success(let fix)?: fixes.append(fix)
        case .failure(let refusal)?: refusals.append((epoch.line, refusal))
        case nil: break
        }
    }

    mutating func date(_ epoch: Epoch) -> [Fix] {
        guard let time = epoch.timeOfDay else { return [] }
        var released: [Fix] = []
        if let date = epoch.date, let start = NMEAField.utcCalendar.date(from: date) {
            if dayStart == nil {
                for held in waiting {
                    guard let heldTime = held.timeOfDay else { continue }
                    let day = heldTime > time + Self.dayLength / 2 ? start.addingTimeInterval(-86_400) : start
                    keep(held, at: day.addingTimeInterval(Double(heldTime) / 1000), in: &released)
                }
                waiting = []
            }
            dayStart = start
        } else if let start = dayStart, let previous = previousTime, time < previous - Self.dayLength / 2 {
            dayStart = start.addingTimeInterval(86_400)
        }
        previousTime = time
        guard let start = dayStart else {
            if epoch.isValidFix { waiting.append(epoch) }
            return released
        }
        keep(epoch, at: start.addingTimeInterval(Double(time) / 1000), in: &released)
        return released
    }
}
