import Foundation
import Support

extension Config {
    /// `ENLOG_INPUT_TIMEOUT`: how long a read of standard input, a pipe or a device may take
    /// (`InputDeadline`). Checked and applied when enlog starts, before any command reads
    /// anything, `validate` and the config file included; a bad value is a configuration error.
    package static func applyInputTimeout(environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) {
        let name = InputDeadline.environmentName
        guard let value = environment[name] else { return }
        let range = NumericRange.timeoutSeconds
        guard let seconds = range.value(of: value) else {
            throw .invalidValue(origin: .environment(name), name: name, reason: "is '\(value)'; it must be \(range.accepted)")
        }
        InputDeadline.set(seconds: seconds)
    }
}
