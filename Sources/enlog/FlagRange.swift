import ArgumentParser
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary
import Sync
import Watch

extension NumericRange {
    /// A command-line flag outside its range is a usage error (exit 2) naming the flag and the
    /// accepted values; the same ranges as the settings, so no number reaches a conversion that traps.
    func check(_ value: Double?, flag: String) throws {
        guard let value, !contains(value) else { return }
        throw ValidationError("\(flag) is '\(value)'; it must be \(accepted)")
    }

    func check(_ value: Int?, flag: String) throws {
        guard let value, !contains(Double(value)) else { return }
        throw ValidationError("\(flag) is '\(value)'; it must be \(accepted)")
    }
}
