import Foundation
import XCTest
@testable import Capture

/// A point as an independent reader (Tests/support/track_peer.py: gpxpy, json, csv) read it.
struct PeerPoint: Decodable {
    let lat: Double
    let lon: Double
    let ele: Double?
    /// Seconds since 1970.
    let time: Double?
    let hdop: Double?
    let accuracy: Double?
    let segment: Int?
}

struct PeerTrack: Decodable {
    let version: String?
    let points: [PeerPoint]
}

enum TrackPeer {
    /// `kind` is gpx, geojson or csv.
    static func read(_ kind: String, _ text: String) throws -> PeerTrack {
        let scratch = try TemporaryDirectory()
        let file = try scratch.file("track.\(kind)", contents: text)
        return try read(kind, file: file.path)
    }

    static func read(_ kind: String, file: String) throws -> PeerTrack {
        let result = try run([kind, file])
        return try JSONDecoder().decode(PeerTrack.self, from: Data(result.utf8))
    }

    /// RGB of PNG pixels, as Pillow reads them.
    static func pixels(_ png: Data, at points: [(x: Double, y: Double)]) throws -> [[Int]] {
        let scratch = try TemporaryDirectory()
        let file = scratch.path("route.png")
        try png.write(to: URL(fileURLWithPath: file))
        struct Pixels: Decodable { let pixels: [[Int]] }
        let output = try run(["pixels", file] + points.map { "\($0.x),\($0.y)" })
        return try JSONDecoder().decode(Pixels.self, from: Data(output.utf8)).pixels
    }

    private static func run(_ arguments: [String]) throws -> String {
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/support/track_peer.py").path
        let result = try Subprocess.run(URL(fileURLWithPath: python), [script] + arguments)
        guard result.status == 0 else { throw PythonServer.StartFailure(description: "track_peer.py \(arguments.first ?? ""): \(result.standardError)") }
        return result.standardOutput
    }

    /// gpsbabel (Debian), a second reader and the converter "from elsewhere".
    static func gpsbabel() throws -> URL {
        guard let program = Subprocess.which("gpsbabel") else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { throw PythonServer.StartFailure(description: "gpsbabel is not installed (scripts/apt-packages.txt)") }
            throw XCTSkip("gpsbabel is not installed")
        }
        return program
    }
}

extension Fix {
    /// The fix as the history keeps it (times to the millisecond).
    var storedTime: Date { Date(timeIntervalSince1970: (timestamp.timeIntervalSince1970 * 1000).rounded() / 1000) }
}

