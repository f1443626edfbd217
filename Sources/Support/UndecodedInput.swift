import Foundation

/// The command line and the environment as the kernel gave them: bytes, which need not be UTF-8.
///
/// Swift's `CommandLine.arguments` and `ProcessInfo.environment` repair bytes that are not UTF-8
/// into U+FFFD, so a path such as `db\xE9.sqlite` would silently name another file
/// (`db\xEF\xBF\xBD.sqlite`): a new, empty outbox, an export written where the user never looks.
/// Paths are bytes. enlog therefore either carries a path's exact bytes to the system calls
/// (`import`'s files and folders: `exactBytes(ofArgument:)`), or refuses the argument or variable
/// with `UndecodedInputError` before anything is opened — never another file, never silence.
package enum UndecodedInput {
    /// The process's arguments (the program's name first), undecoded.
    package static func arguments() -> [[UInt8]] {
        (0..<Int(CommandLine.argc)).compactMap { index in
            CommandLine.unsafeArgv[index].map { Array(UnsafeBufferPointer(start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: strlen($0))) }
        }
    }

    /// The environment, undecoded: each variable Foundation lists, with its value as `getenv`
    /// gives it (the bytes; Foundation's own copy is repaired).
    package static func environment() -> [(name: String, value: [UInt8])] {
        ProcessInfo.processInfo.environment.keys.sorted().compactMap { name in
            guard let value = getenv(name) else { return nil }
            return (name, Array(UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: strlen(value))))
        }
    }

    /// The bytes the kernel passed for an argument the argument parser gave as `decoded`: its
    /// UTF-8 when it was UTF-8, else the one undecodable argument that decodes to it. Nil when
    /// two different arguments decode alike (`a\xE9` and `a\xE8` both become `a\u{FFFD}`), or
    /// when no whole argument does (`--flag=value`): then which bytes were meant is unknown.
    package static func exactBytes(ofArgument decoded: String, in arguments: [[UInt8]] = arguments()) -> [UInt8]? {
        guard decoded.unicodeScalars.contains("\u{FFFD}") else { return Array(decoded.utf8) }
        let candidates = Set(arguments.dropFirst().filter { String(decoding: $0, as: UTF8.self) == decoded })
        guard candidates.count == 1 else { return nil }
        return candidates.first
    }

    /// The first argument that is not UTF-8 and is not among `carried` (the decoded values a
    /// command opens by their exact bytes), as an error; nil when there is none.
    package static func firstUndecodableArgument(carried: [String] = [], in arguments: [[UInt8]] = arguments()) -> UndecodedInputError? {
        let carried = Set(carried.filter { exactBytes(ofArgument: $0, in: arguments) != nil })
        for argument in arguments.dropFirst() where String(validating: argument, as: UTF8.self) == nil {
            if carried.contains(String(decoding: argument, as: UTF8.self)) { continue }
            return .argument(shown: TerminalText.escaped(argument))
        }
        return nil
    }

    /// Whether enlog reads the variable `name`: its own settings, the XDG folders and the
    /// others a path, a command or an address comes from.
    package static func isRead(_ name: String) -> Bool {
        name.hasPrefix("ENLOG_") || name.hasPrefix("XDG_") || readVariables.contains(name)
    }

    private static let readVariables: Set<String> = [
        "HOME", "TMPDIR", "VISUAL", "EDITOR", "NOTIFY_SOCKET", "TZ", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR",
        "http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
    ]

    /// The first variable enlog reads whose value is not UTF-8, as an error; nil when there is none.
    package static func firstUndecodableVariable(in environment: [(name: String, value: [UInt8])] = environment()) -> UndecodedInputError? {
        for (name, value) in environment {
            guard isRead(name), String(validating: value, as: UTF8.self) == nil else { continue }
            return .environment(name: name, shown: TerminalText.escaped(value))
        }
        return nil
    }
}

/// An argument or a variable enlog reads that is not UTF-8, where enlog cannot carry its bytes:
/// refused rather than repaired into the name of another file.
package enum UndecodedInputError: ENLogError, Equatable {
    /// `shown`: the argument with its bad bytes as `\xNN`.
    case argument(shown: String)
    case environment(name: String, shown: String)

    package var reason: String {
        switch self {
        case .argument(let shown):
            return "the argument '\(shown)' is not UTF-8: enlog would open another name than the one given"
        case .environment(let name, let shown):
            return "\(name)='\(shown)' is not UTF-8: enlog would use another path than the one given"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .argument: return "rename the file or folder to a UTF-8 name, or give a symbolic link with one"
        case .environment(let name, _): return "set \(name) to a UTF-8 path (a symbolic link with a UTF-8 name will do), or unset it"
        }
    }

    package var category: ErrorCategory {
        switch self {
        case .argument: return .usage
        case .environment: return .config
        }
    }
}
