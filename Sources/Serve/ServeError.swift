import Foundation
import Support

/// What stops `enlog serve` or `enlog devices`.
package enum ServeError: ENLogError, Equatable {
    /// The address is in use, not this machine's, or needs privileges.
    case cannotListen(address: String, detail: String)
    case invalidDeviceName(String)
    case deviceExists(String)
    case noSuchDevice(String)

    package var reason: String {
        switch self {
        case let .cannotListen(address, detail):
            return TerminalText.oneLine("cannot listen on \(address): \(detail)")
        case let .invalidDeviceName(name):
            return TerminalText.oneLine("'\(name)' is not a device name: 1 to 64 letters, digits, '-', '_' or '.'")
        case let .deviceExists(name):
            return "a device named \(name) exists already"
        case let .noSuchDevice(name):
            return TerminalText.oneLine("no device named \(name)")
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .cannotListen: return "choose another address with --listen or serve.listen, or stop what listens there"
        case .deviceExists: return "`enlog devices remove NAME` first to give it a new secret"
        case .noSuchDevice: return "`enlog devices list` names them"
        case .invalidDeviceName: return nil
        }
    }

    package var category: ErrorCategory {
        switch self {
        case .cannotListen: return .unavailable
        case .invalidDeviceName, .deviceExists, .noSuchDevice: return .usage
        }
    }
}
