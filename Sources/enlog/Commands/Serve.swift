import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif
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
import Serve
import CoreCommands

/// `enlog serve`: parsed and shown in help here, run by `enlog-serve` (ServeExecutable).
struct ServeCommand: ParsableCommand {
    static let configuration = ServeOptions.configuration

    @OptionGroup var options: ServeOptions

    func run() throws {
        try ServeExecutable.run(arguments: CommandLine.unsafeArgv, count: Int(CommandLine.argc))
    }
}

/// `enlog-serve`, the executable that holds the phones' receiver, found beside enlog's own
/// (both are built by `swift build` and installed together by scripts/package). `enlog serve`
/// becomes it with `execv`: the same process, so systemd's socket (`LISTEN_PID`), its notify
/// socket and the terminal's signals reach the receiver as they reached enlog.
enum ServeExecutable {
    static let name = "enlog-serve"

    static func run(arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, count: Int) throws(ServeExecutableError) {
        let path = try location()
        // argv unchanged (argv[0] "enlog", then "serve" and its options): the bytes the user
        // typed, and the same command line to enlog-serve's parser, whose root is also "enlog".
        execv(path, arguments)
        throw .cannotRun(path: path, reason: String(cString: strerror(errno)))
    }

    /// enlog-serve in the folder of the running executable (/proc/self/exe, symbolic links resolved).
    static func location() throws(ServeExecutableError) -> String {
        guard let own = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            throw .cannotRun(path: name, reason: "cannot read /proc/self/exe")
        }
        let path = (own as NSString).deletingLastPathComponent + "/" + name
        guard access(path, X_OK) == 0 else { throw .missing(path: path) }
        return path
    }
}

enum ServeExecutableError: ENLogError, Equatable {
    case missing(path: String)
    case cannotRun(path: String, reason: String)

    var category: ErrorCategory { .unavailable }

    var reason: String {
        switch self {
        case .missing(let path): return "enlog serve runs \(path), which is missing or not executable"
        case .cannotRun(let path, let reason): return "cannot run \(path): \(reason)"
        }
    }

    var recoverySuggestion: String? {
        "install enlog-serve beside enlog: it comes in the same package, and `swift build` builds it"
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "The phones enlog serve takes points from, each with its own secret.",
        discussion: """
            Examples:
              enlog devices add phone
              enlog devices add phone --json
              enlog devices list
              enlog devices remove phone
            """,
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Make a device with a new secret and print what to type into each app.",
            discussion: """
                The secret is printed this once and stored only as its SHA-256. The URLs start with \
                serve.url (set it to what the phone reaches, e.g. a reverse proxy's https:// address), \
                else http:// and serve.listen (https:// when serve.tls_certificate and serve.tls_key are set). --json prints {"device", "secret", "owntracks", \
                "overland", "gpslogger", "traccar"}, each app's URL, user and password or token.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The device's name: letters, digits, '-', '_', '.'.") var name: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            guard DeviceSecrets.isValidName(name) else { throw ServeError.invalidDeviceName(name) }
            let context = try global.context()
            let outbox = try context.outbox()
            let secret = DeviceSecrets.generate()
            guard try await outbox.addDevice(DeviceRecord(name: name, secretHash: DeviceSecrets.hash(secret), createdAt: Date())) else {
                throw ServeError.deviceExists(name)
            }
            let links = PhoneLinks(device: name, secret: secret, base: PhoneLinks.base(config: context.config))
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                try Terminal.standardOutput(String(decoding: try encoder.encode(links), as: UTF8.self))
            } else {
                try Terminal.standardOutput(links.text)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the devices, their points and the latest point's time.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        struct Row: Encodable {
            var name: String
            var createdAt: String
            var points: Int
            var lastPoint: String?
        }

        func run() async throws {
            let outbox = try global.context().outbox(.read)
            let rows = try await outbox.devices().map {
                Row(name: $0.device.name, createdAt: InstantText.string($0.device.createdAt), points: $0.points,
                    lastPoint: $0.lastPoint.map { InstantText.string($0) })
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try Terminal.standardOutput(String(decoding: try encoder.encode(rows), as: UTF8.self))
            } else {
                for row in rows {
                    try Terminal.standardOutput("\(row.name)\t\(row.points)\t\(row.lastPoint ?? "-")\tadded \(row.createdAt)")
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a device: its secret stops working; its points stay in the history.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The device's name.") var name: String

        func run() async throws {
            let outbox = try global.context().outbox(.change)
            guard try await outbox.removeDevice(named: name) else { throw ServeError.noSuchDevice(name) }
            try Terminal.standardOutput("removed device \(name)")
        }
    }
}

extension OutboxStore {
    /// `--device NAME` of `timeline`, `places list` and `digest`: a name `enlog devices add` made
    /// or one the history's points carry; else `ServeError.noSuchDevice` (a usage error), so a
    /// typo is not taken for a device that stayed nowhere.
    func checkDevice(_ name: String?) async throws {
        guard let name else { return }
        guard try await knowsDevice(name) else { throw ServeError.noSuchDevice(name) }
    }
}
