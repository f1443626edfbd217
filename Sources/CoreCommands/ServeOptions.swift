import ArgumentParser
import Configuration

/// `enlog serve`'s command line, declared once for both executables that parse it: `enlog`, which
/// shows it in help and completions and checks it, and `enlog-serve`, which `enlog serve` runs
/// with the same arguments (the receiver and SwiftNIO live only there, so that every other command
/// starts without their type metadata; docs/benchmarks.md, "serve in its own executable").
package struct ServeOptions: ParsableArguments {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Take live locations from phone apps (OwnTracks, Overland, GPSLogger, Traccar) into the diary.",
        discussion: """
            Listens on serve.listen (default 127.0.0.1:8473) for the apps' own HTTP protocols: \
            POST /owntracks, POST /overland/NAME, GET or POST /gpslogger, GET or POST /traccar/NAME/SECRET. \
            Each device authenticates with the secret `enlog devices add NAME` printed. A request's \
            points are committed in one transaction before the reply; a batch sent again adds \
            nothing. Notes are written as watch writes them (watch.min_distance, watch.min_interval), \
            per device; with watch.digest, the day's digest after midnight. Runs until SIGTERM or \
            SIGINT (exit 0): requests being answered are finished, nothing is half stored. \
            With serve.tls_certificate and serve.tls_key it speaks HTTPS (TLS 1.2 or later) instead.

            Examples:
              enlog devices add phone
              enlog serve
              enlog serve --listen 0.0.0.0:8473 --json
              enlog serve --check
            """)

    @OptionGroup package var global: GlobalOptions

    @Option(help: ArgumentHelp("Address and port to listen on", overriding: .serveListen, valueName: "addr:port"))
    package var listen: String?

    @Flag(help: "Check the configuration and the outbox, say where it would listen, and exit.") package var check = false
    @Flag(help: "One JSON object per event on stderr.") package var json = false
    @Flag(name: .shortAndLong, help: "Also report every request's points.") package var verbose = false
}
