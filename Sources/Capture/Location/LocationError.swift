import Foundation
import Support
import Configuration
import Network

package enum LocationError: ENLogError, Equatable {
    case nonFiniteCoordinate(name: String, value: Double)
    case latitudeOutOfRange(Double)
    case longitudeOutOfRange(Double)
    /// An altitude, accuracy, speed or course outside `Fix.Limits`.
    case valueOutOfRange(name: String, value: Double, limits: ClosedRange<Double>, unit: String)
    /// A time outside `Fix.Limits.time`.
    case timeOutOfRange(Date)
    /// The system clock reads a time no fix can have (before GPS time began, after 2099): the
    /// clock is wrong, not the position.
    case systemClockWrong(Date)

    /// `--at` text that is not `LAT,LON[,ALT]`; `problem` names the part that is wrong.
    case malformedManualLocation(input: String, problem: String)

    case nmeaLogUnreadable(path: String, detail: String)
    case nmeaLogEmpty(path: String)
    case nmeaLogHasNoSentences(path: String)
    /// Position sentences were read and none reported a fix.
    case nmeaLogHasNoValidFix(path: String, sentences: Int, badChecksums: Int)
    /// Lines looked like sentences but none passed its checksum.
    case nmeaLogHasNoCheckedSentence(path: String, badChecksums: Int, firstBadLine: Int)
    /// Sentences were read, but none of a type that gives a position (GGA, RMC, GLL, GNS);
    /// `kinds` names the most frequent ones with their counts; `badChecksums` were not read.
    case nmeaLogHasNoPositionSentences(path: String, sentences: Int, kinds: String, badChecksums: Int)
    /// No valid fix, and position sentences with impossible values were skipped (the first named).
    case nmeaLogHasOnlyInvalidPositions(path: String, line: Int, problem: String, invalidSentences: Int)
    case nmeaLogHasNoDate(path: String)

    case invalidGPSDEndpoint(String)
    case gpsdUnreachable(endpoint: String, detail: String)
    case gpsdClosedConnection(endpoint: String)
    /// gpsd answered, but in `waited` seconds reported no position with mode >= 2.
    case gpsdNoFix(endpoint: String, waited: TimeInterval, reports: Int, noDevice: Bool)
    /// Fixes arrived but none passed the quality filter; `best` is the closest to passing.
    case gpsdNoAcceptableFix(endpoint: String, waited: TimeInterval, fixesSeen: Int,
                             best: Fix, rejection: QualityFilter.Rejection)

    /// One line whatever it quotes: a sentence's field, a gpsd address, `--at` text.
    package var reason: String { TerminalText.oneLine(unflattenedReason) }

    private var unflattenedReason: String {
        switch self {
        case let .nonFiniteCoordinate(name, value):
            return "\(name) \(value) is not a finite number"
        case let .latitudeOutOfRange(value):
            return "latitude \(Self.number(value)) is outside -90...90"
        case let .longitudeOutOfRange(value):
            return "longitude \(Self.number(value)) is outside -180...180"
        case let .valueOutOfRange(name, value, limits, unit):
            return "\(name) \(Self.number(value)) \(unit) is outside \(Self.number(limits.lowerBound))...\(Self.number(limits.upperBound)) \(unit)"
        case let .timeOutOfRange(time):
            let limits = Fix.Limits.time
            return "time \(TrackTime.string(time)) is outside \(TrackTime.string(limits.lowerBound))...\(TrackTime.string(limits.upperBound)) (GPS time begins in 1980)"
        case let .systemClockWrong(now):
            return "the system clock is wrong: it says \(TrackTime.string(now)), outside \(TrackTime.string(Fix.Limits.time.lowerBound))...\(TrackTime.string(Fix.Limits.time.upperBound)), so no fix can be stamped now"
        case let .malformedManualLocation(input, problem):
            return "location '\(input)' is not LAT,LON[,ALT]: \(problem)"
        case let .nmeaLogUnreadable(path, detail):
            return "cannot read NMEA log \(path): \(detail)"
        case let .nmeaLogEmpty(path):
            return "NMEA log \(path) is empty"
        case let .nmeaLogHasNoSentences(path):
            return "\(path) contains no NMEA 0183 sentences"
        case let .nmeaLogHasNoValidFix(path, sentences, badChecksums):
            let checksums = badChecksums > 0 ? ", \(badChecksums) with bad or missing checksums" : ""
            return "NMEA log \(path) has no valid position fix (\(counted(sentences, "sentence"))\(checksums))"
        case let .nmeaLogHasNoCheckedSentence(path, badChecksums, firstBadLine):
            return "none of the \(badChecksums) sentences in NMEA log \(path) has a valid checksum (the first bad one is at line \(firstBadLine))"
        case let .nmeaLogHasNoPositionSentences(path, sentences, kinds, badChecksums):
            let damaged = badChecksums > 0 ? "; \(badChecksums) more with bad or missing checksums" : ""
            let seen = [kinds, damaged.dropFirst(2).description].filter { !$0.isEmpty }.joined(separator: "; ")
            return "NMEA log \(path) has \(counted(sentences, "sentence")) but none of a type that gives a position"
                + (seen.isEmpty ? "" : " (\(seen))")
        case let .nmeaLogHasOnlyInvalidPositions(path, line, problem, invalidSentences):
            let others = invalidSentences > 1 ? " and \(invalidSentences - 1) more" : ""
            return "NMEA log \(path) has no valid position fix: line \(line) was skipped (\(problem))\(others)"
        case let .nmeaLogHasNoDate(path):
            return "NMEA log \(path) has positions but no RMC or ZDA sentence giving their date"
        case let .invalidGPSDEndpoint(text):
            return "'\(text)' is not a gpsd address (expected HOST, HOST:PORT or [IPv6]:PORT)"
        case let .gpsdUnreachable(endpoint, detail):
            return "cannot reach gpsd at \(endpoint): \(detail)"
        case let .gpsdClosedConnection(endpoint):
            return "gpsd at \(endpoint) closed the connection before giving a fix"
        case let .gpsdNoFix(endpoint, waited, reports, noDevice):
            if noDevice {
                return "gpsd at \(endpoint) has no GPS device attached (waited \(Self.seconds(waited)))"
            }
            return "gpsd at \(endpoint) reported no position fix in \(Self.seconds(waited)) (\(reports) reports without a fix)"
        case let .gpsdNoAcceptableFix(endpoint, waited, fixesSeen, best, rejection):
            let accuracy = best.horizontalAccuracy.map { String(format: "±%.1f m", $0) } ?? "unknown accuracy"
            return "no fix from gpsd at \(endpoint) passed the quality filter in \(Self.seconds(waited)) "
                + "(\(fixesSeen) seen; best \(String(format: "%.6f,%.6f", best.latitude, best.longitude)) "
                + "\(accuracy): \(rejection))"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .nonFiniteCoordinate, .latitudeOutOfRange, .longitudeOutOfRange:
            return "give decimal degrees, latitude first: e.g. 48.8584,2.2945"
        case .valueOutOfRange, .timeOutOfRange:
            return "the source gave an impossible value; check the receiver, file or photo it came from"
        case .systemClockWrong:
            return "set the clock (timedatectl set-time, or wait for NTP to set it), then try again"
        case .malformedManualLocation:
            return "write decimal degrees with '.' as decimal point, latitude first, e.g. 48.8584,2.2945 or 48.8584,2.2945,35"
        case .nmeaLogUnreadable:
            return "check the path and its permissions"
        case .nmeaLogEmpty, .nmeaLogHasNoSentences:
            return "point to a file of NMEA sentences such as $GPGGA,... and $GPRMC,..."
        case .nmeaLogHasNoValidFix:
            return "the receiver had no fix while logging; use a log recorded with a fix (GGA quality > 0 or RMC status A)"
        case .nmeaLogHasNoCheckedSentence:
            return "the log is damaged or not NMEA 0183 (each sentence must end in *XX, its checksum)"
        case .nmeaLogHasNoPositionSentences:
            return "log GGA, RMC, GLL or GNS sentences (of any talker: GP, GN, GL…) to get a position"
        case .nmeaLogHasOnlyInvalidPositions:
            return "the receiver wrote impossible values; check its output or use a log recorded with a fix"
        case .nmeaLogHasNoDate:
            return "log RMC sentences as well as GGA, so that each fix has a date"
        case .invalidGPSDEndpoint:
            return "for example 127.0.0.1:2947 or [::1]:2947"
        case .gpsdUnreachable:
            return "start gpsd (systemctl start gpsd) or give its address with --gpsd HOST:PORT"
        case .gpsdClosedConnection:
            return "check gpsd's log (journalctl -u gpsd) and try again"
        case let .gpsdNoFix(_, _, _, noDevice):
            return noDevice
                ? "plug in the receiver and check it is listed by gpsd (gpspipe -w -n 3)"
                : "move to a place with open sky, wait longer (--timeout), or log a position by hand: `enlog log --at LAT,LON`"
        case .gpsdNoAcceptableFix:
            return "wait longer (--timeout), relax --min-accuracy or --max-age (location.min_accuracy, location.max_age), "
                + "or log a position by hand: `enlog log --at LAT,LON`"
        }
    }

    /// Up to 10 significant digits, so 1e308 stays short and 99999999 stays whole.
    static func number(_ value: Double) -> String { String(format: "%.10g", value) }

    private static func seconds(_ value: TimeInterval) -> String {
        String(format: "%.1f s", value)
    }
}

extension LocationError {
    package var category: ErrorCategory {
        switch self {
        case .nmeaLogUnreadable: return .noInput
        case .invalidGPSDEndpoint: return .usage
        case .gpsdUnreachable, .gpsdClosedConnection, .gpsdNoFix, .gpsdNoAcceptableFix: return .unavailable
        // Try again once the clock is set (NTP usually does within a minute of a network).
        case .systemClockWrong: return .temporary
        default: return .badLocation
        }
    }
}
