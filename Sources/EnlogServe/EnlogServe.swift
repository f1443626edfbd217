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
import Outbox
import Watch
import Serve
import ServeHTTP
import CoreCommands

/// `enlog-serve`: `enlog serve` in an executable of its own, which `enlog serve` runs
/// (ServeExecutable in enlog). SwiftNIO is linked here only: the Swift runtime scans every
/// protocol conformance an executable holds on each first lookup of a type, and NIO's 900
/// conformances made every other command slower to start (docs/benchmarks.md, "serve in its
/// own executable"). Its root is named "enlog", as enlog's, so that the command line
/// `enlog serve …` parses here as it parsed there; `enlog-serve …` alone means the same.
@main
struct EnlogServe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enlog",
        abstract: "The phones' receiver of enlog: run it as `enlog serve`.",
        version: ENLogVersion.current,
        subcommands: [ServeRun.self],
        defaultSubcommand: ServeRun.self)

    static func main() async {
        await CommandMain.run(EnlogServe.self)
    }
}

/// `enlog serve` itself: the receiver on SwiftNIO, run until SIGTERM or SIGINT.
struct ServeRun: AsyncParsableCommand {
    static let configuration = ServeOptions.configuration

    @OptionGroup var options: ServeOptions

    func run() async throws {
        let flags: [Setting: (flag: String, value: String?)] = [.serveListen: ("--listen", options.listen)]
        let context = try options.global.context(flags: flags)
        let config = context.config
        guard let address = ListenAddress(parsing: config.string(.serveListen) ?? "") else {
            throw ValidationError("serve.listen is not ADDR:PORT")   // the setting's check refuses it first
        }
        // Socket activation (enlog-serve.socket, systemd-socket-activate): the socket systemd
        // bound wins over serve.listen. Read before anything else, so that no child inherits it.
        let activated = try SystemdSocketActivation.listeningSocket()
        let broker = try config.string(.serveMQTTBroker).map { text throws(MQTTError) in try MQTTBroker(url: text) }
        let tls = try ServeTLSContext.load(config: config)
        let outbox = try context.outbox()
        let devices = try await outbox.devices()
        let json = options.json, verbose = options.verbose
        let report: @Sendable (WatchReport) -> Void = { report in
            guard report.level != .detail || verbose else { return }
            Terminal.standardError(json ? report.json : report.line)
        }
        let expiryWarning = tls.flatMap { tls in
            tls.expiryWarning().map { WatchReport(.problem, "tls-expires-soon", $0, ["notAfter": .string(utcTimestamp(tls.validity.notAfter))]) }
        }
        if options.check {
            if let expiryWarning { report(expiryWarning) }
            try Terminal.standardOutput("configuration valid; enlog serve would listen on \(address)"
                                        + (tls.map { " with TLS (\($0.certificatePath), valid until \(utcTimestamp($0.validity.notAfter)))" } ?? "")
                                        + " for \(counted(devices.count, "device"))"
                                        + (devices.isEmpty ? " (add one: enlog devices add NAME)" : ""))
            return
        }
        let diary = PhoneDiary(outbox: outbox, context: context, dependencies: PhoneDiary.Dependencies(
            account: { EvernoteAccount.stored() },
            report: report))
        let receiver = PhoneReceiver(outbox: outbox, limits: PhoneReceiver.Limits(requestsPerMinute: config.integer(.serveRate)),
                                     diary: diary, report: report)
        let settings = PhoneServer.Settings(maxBody: Int(config.number(.serveMaxBody) * 1_048_576),
                                            maxConnections: config.integer(.serveMaxConnections),
                                            idleTimeout: .milliseconds(Int64(config.number(.serveIdleTimeout) * 1000)),
                                            tls: tls.map { ServeTLSCertificates($0, report: report) })
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
                           + (tls == nil ? "" : " with TLS")
                           + " for \(counted(devices.count, "device"))" + (devices.isEmpty ? " (none yet: enlog devices add NAME)" : ""),
                           ["address": .string(running.address), "devices": .int(devices.count), "pid": .int(Int(getpid())),
                            "socketActivated": .bool(activated != nil), "tls": .bool(tls != nil)]))
        if let expiryWarning { report(expiryWarning) }
        // OwnTracks' MQTT mode (serve.mqtt_broker): the same receiver, the broker vouching for the sender.
        let mqtt = broker.map { OwnTracksMQTT(broker: $0, receiver: receiver, report: report) }
        if let mqtt, let broker {
            report(WatchReport(.event, "mqtt", "subscribing to \(OwnTracksMQTT.topic) at \(broker.address)", ["broker": .string(broker.address)]))
            mqtt.start()
        }
        let notifier = SystemdNotifier()
        notifier.notify(["READY=1", "STATUS=listening on \(running.address)" + (mqtt == nil ? "" : ", MQTT \(OwnTracksMQTT.topic)")])
        var number = await signals.next()
        while number == SIGHUP {
            // `systemctl reload enlog-serve` (ExecReload): the certificate and key read again.
            if let certificates = settings.tls {
                _ = await BlockingCall.run("enlog-tls-reload") { _ in certificates.reload(.signal) }
            } else {
                report(WatchReport(.event, "reload", "SIGHUP: nothing to read again (no serve.tls_certificate); other settings take a restart"))
            }
            number = await signals.next()
        }
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

/// SIGTERM, SIGINT and SIGHUP, their default actions off, as awaitable values.
final class ServeSignals {
    private var signals: AsyncStream<Int32>.Iterator
    private let sources: [any DispatchSourceSignal]

    init() {
        let (stream, feed) = AsyncStream.makeStream(of: Int32.self)
        signals = stream.makeAsyncIterator()
        sources = [SIGTERM, SIGINT, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { feed.yield(number) }
            source.resume()
            return source
        }
    }

    func next() async -> Int32 {
        await signals.next() ?? SIGTERM
    }
}

