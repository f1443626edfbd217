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

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Take live locations from phone apps (OwnTracks, Overland, GPSLogger, Traccar) into the diary.",
        discussion: """
            Listens on serve.listen (default 127.0.0.1:8473) for the apps' own HTTP protocols: \
            POST /owntracks, POST /overland/NAME, GET or POST /gpslogger, GET or POST /traccar/NAME/SECRET. \
            Each device authenticates with the secret `enlog devices add NAME` printed. A request's \
            points are committed in one transaction before the reply; a batch sent again adds \
            nothing. Notes are written as watch writes them (watch.min_distance, watch.min_interval), \
            per device; with watch.digest, the day's digest after midnight. Runs until SIGTERM or \
            SIGINT (exit 0): requests being answered are finished, nothing is half stored.

            Examples:
              enlog devices add phone
              enlog serve
              enlog serve --listen 0.0.0.0:8473 --json
              enlog serve --check
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Address and port to listen on", overriding: .serveListen, valueName: "addr:port"))
    var listen: String?

    @Flag(help: "Check the configuration and the outbox, say where it would listen, and exit.") var check = false
    @Flag(help: "One JSON object per event on stderr.") var json = false
    @Flag(name: .shortAndLong, help: "Also report every request's points.") var verbose = false

    func run() async throws {
        let flags: [Setting: (flag: String, value: String?)] = [.serveListen: ("--listen", listen)]
        let context = try global.context(flags: flags)
        let config = context.config
        guard let address = ListenAddress(parsing: config.string(.serveListen) ?? "") else {
            throw ValidationError("serve.listen is not ADDR:PORT")   // the setting's check refuses it first
        }
        // Socket activation (enlog-serve.socket, systemd-socket-activate): the socket systemd
        // bound wins over serve.listen. Read before anything else, so that no child inherits it.
        let activated = try SystemdSocketActivation.listeningSocket()
        let broker = try config.string(.serveMQTTBroker).map { text throws(MQTTError) in try MQTTBroker(url: text) }
        let outbox = try context.outbox()
        let devices = try await outbox.devices()
        let json = self.json, verbose = self.verbose
        let report: @Sendable (WatchReport) -> Void = { report in
            guard report.level != .detail || verbose else { return }
            Terminal.standardError(json ? report.json : report.line)
        }
        if check {
            try Terminal.standardOutput("configuration valid; enlog serve would listen on \(address) with \(counted(devices.count, "device"))"
                                        + (devices.isEmpty ? " (add one: enlog devices add NAME)" : ""))
            return
        }
        let diary = PhoneDiary(outbox: outbox, context: context, dependencies: PhoneDiary.Dependencies(
            account: { (try? Account.credentialStore().loadIfPresent()).flatMap { $0 }.map { EvernoteAccount(credentials: $0) } },
            report: report))
        let receiver = PhoneReceiver(outbox: outbox, limits: PhoneReceiver.Limits(requestsPerMinute: config.integer(.serveRate)),
                                     diary: diary, report: report)
        let settings = PhoneServer.Settings(maxBody: Int(config.number(.serveMaxBody) * 1_048_576),
                                            maxConnections: config.integer(.serveMaxConnections),
                                            idleTimeout: .milliseconds(Int64(config.number(.serveIdleTimeout) * 1000)))
        let signals = ServeSignals()
        let running: PhoneServer.Running
        do {
            running = try await PhoneServer(receiver: receiver, settings: settings, report: report)
                .start(activated.map { PhoneServer.Listener.descriptor($0) } ?? PhoneServer.Listener.address(address))
        } catch {
            await diary.finish()
            throw ServeError.cannotListen(address: activated.flatMap(SystemdSocketActivation.localAddress(of:)) ?? address.description, detail: "\(error)")
        }
        report(WatchReport(.event, "listening", "listening on \(running.address)" + (activated == nil ? "" : " (the socket systemd passed)")
                           + " for \(counted(devices.count, "device"))" + (devices.isEmpty ? " (none yet: enlog devices add NAME)" : ""),
                           ["address": .string(running.address), "devices": .int(devices.count), "pid": .int(Int(getpid())),
                            "socketActivated": .bool(activated != nil)]))
        // OwnTracks' MQTT mode (serve.mqtt_broker): the same receiver, the broker vouching for the sender.
        let mqtt = broker.map { OwnTracksMQTT(broker: $0, receiver: receiver, report: report) }
        if let mqtt, let broker {
            report(WatchReport(.event, "mqtt", "subscribing to \(OwnTracksMQTT.topic) at \(broker.address)", ["broker": .string(broker.address)]))
            mqtt.start()
        }
        let notifier = SystemdNotifier()
        notifier.notify(["READY=1", "STATUS=listening on \(running.address)" + (mqtt == nil ? "" : ", MQTT \(OwnTracksMQTT.topic)")])
        let number = await signals.next()
        notifier.notify(["STOPPING=1", "STATUS=stopping: finishing the requests being answered"])
        report(WatchReport(.event, "stopping", number == SIGINT ? "interrupted; finishing the requests being answered" : "terminated; finishing the requests being answered",
                           ["signal": .int(Int(number))]))
        // The message being stored is finished and acknowledged; then nothing more comes from the broker.
        if let mqtt { await BlockingCall.run("enlog-mqtt-stop") { _ in mqtt.stop() } }
        await running.stop()
        await diary.finish()
        report(WatchReport(.event, "stopped", "stopped"))
    }
}

/// SIGTERM and SIGINT, their default actions off, as an awaitable value.
final class ServeSignals {
    private let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init() {
        let (stream, feed) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { feed.yield(number) }
            source.resume()
            return source
        }
    }

    func next() async -> Int32 {
        for await number in stream { return number }
        return SIGTERM
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
                else http:// and serve.listen. --json prints {"device", "secret", "owntracks", \
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
