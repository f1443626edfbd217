import Foundation
import XCTest
@testable import Fuzzing

/// Every fuzz target, briefly, in every test run (CI included): a few hundred mutations of its
/// seeds (bits flipped, bytes set to the values parsers trip on, ranges cut, doubled or spliced
/// from another seed) through the same `FuzzTarget` libFuzzer drives. Without coverage guidance
/// or AddressSanitizer this finds only shallow faults; the real searches are `scripts/fuzz`'s.
/// What it guarantees is that no target is broken or crashes on the first mutations of its own
/// seeds, in the build every change is tested with. The seed of the run is printed and can be
/// given back (`ENLOG_FUZZ_SMOKE_SEED`) to repeat a failure.
final class FuzzSmokeTests: XCTestCase {
    static let mutationsPerTarget = 300
    /// Seeds longer than this are cut: the point is many inputs, not large ones.
    static let longestInput = 16 << 10

    /// The seeds scripts/fuzz uses that need no generator: hand-written ones, earlier findings,
    /// and a few real files from ../shared/ for the parsers they fit.
    static func seeds(of target: FuzzTarget) throws -> [[UInt8]] {
        var files = try FuzzRegressionTests.files(in: "Fuzz/seeds/\(target.name)")
            + FuzzRegressionTests.files(in: "Tests/Fixtures/fuzz/\(target.name)")
        let shared = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared")
        func some(_ folder: String, _ suffix: String) -> [URL] {
            let directory = shared.appendingPathComponent(folder)
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(suffix) }.sorted()
            return names.prefix(4).map { directory.appendingPathComponent($0) }
        }
        switch target.name {
        case "nmea": files += some("nmea-real", ".log")
        case "gpx": files += some("location-history-real", ".gpx")
        case "track": files += some("nmea-real", ".log") + some("location-history-real", ".gpx")
        case "enml": files += some("enml-wild", ".enml")
        case "geocoder": files += try FuzzRegressionTests.files(in: "Tests/Fixtures/nominatim").prefix(4)
        default: break
        }
        let bytes = try files.map { Array(try Data(contentsOf: $0).prefix(longestInput)) }
        // Targets without seed files (the tile decoder, Thrift replies, EXIF, config, whose seeds
        // scripts/fuzz makes with Python or exiftool) start from small inputs of their kind.
        return bytes + (extraSeeds[target.name] ?? []) + [[]]
    }

    static let extraSeeds: [String: [[UInt8]]] = [
        // The smallest PNG: one grey pixel.
        "tile": [[0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1,
                  8, 0, 0, 0, 0, 0x3A, 0x7E, 0x9B, 0x55, 0, 0, 0, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x60, 0, 0, 0,
                  2, 0, 1, 0x48, 0xAF, 0xA4, 0x71, 0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]],
        // A Thrift binary reply: a message header (version 1, REPLY), then a struct with field 0.
        "thrift": [[0x80, 0x01, 0x00, 0x02, 0, 0, 0, 4, 0x70, 0x69, 0x6E, 0x67, 0, 0, 0, 1, 0x0C, 0, 0, 0x0B, 0, 1, 0, 0, 0, 2, 0x68, 0x69, 0, 0]],
        // A JPEG start and an EXIF APP1 header.
        "exif": [[0xFF, 0xD8, 0xFF, 0xE1, 0, 0x16, 0x45, 0x78, 0x69, 0x66, 0, 0, 0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0xFF, 0xD9]],
        "config": [Array("[map]\nstyle = \"tiles\"\nzoom = 15\n[note]\ntags = [\"a\", \"b\"]\n[geocoding]\ntimeout = 2.5\n".utf8)],
        "geocoder": [Array("{\"display_name\":\"1 Rue, Paris\",\"address\":{\"road\":\"Rue\",\"city\":\"Paris\"},\"lat\":\"48.85\",\"lon\":\"2.35\"}".utf8)],
    ]

    func testEveryTargetTakesMutationsOfItsSeedsInItsStride() throws {
        // CI repeats one seed, so that a landing is never blocked by a shallow finding that
        // another change happened to draw; a developer's runs draw a new one each time.
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["ENLOG_FUZZ_SMOKE_SEED"].flatMap(UInt64.init)
            ?? (environment["CI"] == "true" ? 20_261_124 : UInt64.random(in: 1...UInt64.max))
        print("fuzz smoke seed: \(seed) (ENLOG_FUZZ_SMOKE_SEED=\(seed) repeats this run)")
        for target in FuzzTarget.all {
            let seeds = try Self.seeds(of: target)
            // Each target its own stream, the same in every run of this seed (FNV-1a of its name).
            var mutator = Mutator(seed: seed ^ target.name.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 })
            for seedInput in seeds {
                do { try target.run(seedInput) } catch { XCTFail("\(target.name), a seed: \(error)") }
            }
            for round in 0..<Self.mutationsPerTarget {
                let input = mutator.mutate(seeds[round % seeds.count], other: seeds[(round * 7 + 3) % seeds.count])
                do {
                    try target.run(input)
                } catch {
                    XCTFail("\(target.name), mutation \(round) of seed run \(seed): \(error); input (base64): \(Data(input).base64EncodedString())")
                }
            }
        }
    }

    func testTheMutatorIsRepeatableAndChangesItsInput() {
        var first = Mutator(seed: 42), second = Mutator(seed: 42)
        let input = Array("$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47".utf8)
        let a = (0..<50).map { _ in first.mutate(input, other: input) }
        let b = (0..<50).map { _ in second.mutate(input, other: input) }
        XCTAssertEqual(a, b)
        XCTAssertGreaterThan(a.filter { $0 != input }.count, 40)
    }
}

/// Byte-level mutations in the manner of libFuzzer's, from the tests' `SplitMix64` stream
/// (repeatable from its seed).
struct Mutator {
    private var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { random.next() }

    private mutating func below(_ bound: Int) -> Int { bound <= 1 ? 0 : random.below(bound) }

    /// Values at which parsers' checks tend to sit: ends of ranges, separators, quotes, digits.
    static let interesting: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF, 0xFE, 0x0A, 0x0D, 0x20, 0x22, 0x27, 0x2C, 0x2A, 0x24,
                                       0x3C, 0x3E, 0x26, 0x2F, 0x3A, 0x5B, 0x5D, 0x7B, 0x7D, 0x5C, 0x2D, 0x2E, 0x30, 0x39, 0x65]

    mutating func mutate(_ input: [UInt8], other: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0...below(4) {
            switch below(8) {
            case 0 where !bytes.isEmpty:
                bytes[below(bytes.count)] ^= 1 << UInt8(below(8))
            case 1 where !bytes.isEmpty:
                bytes[below(bytes.count)] = Self.interesting[below(Self.interesting.count)]
            case 2:
                let at = below(bytes.count + 1)
                bytes.insert(contentsOf: (0..<1 + below(8)).map { _ in Self.interesting[below(Self.interesting.count)] }, at: at)
            case 3 where !bytes.isEmpty:
                let start = below(bytes.count)
                bytes.removeSubrange(start..<min(bytes.count, start + 1 + below(64)))
            case 4 where !bytes.isEmpty:
                let start = below(bytes.count)
                let piece = bytes[start..<min(bytes.count, start + 1 + below(256))]
                bytes.insert(contentsOf: Array(repeating: Array(piece), count: 1 + below(4)).joined(), at: below(bytes.count + 1))
            case 5 where !bytes.isEmpty:
                bytes.removeLast(below(bytes.count) + 1)
            case 6 where !other.isEmpty:
                let start = below(other.count)
                bytes.insert(contentsOf: other[start..<min(other.count, start + 1 + below(512))], at: below(bytes.count + 1))
            default:
                // A number made long, negative or huge where a digit was.
                if let digit = bytes.indices.filter({ (0x30...0x39).contains(bytes[$0]) }).randomElement(using: &self) {
                    let replacement = ["99999999999999999999", "-1", "1e308", "NaN", "0.0000001"][below(5)]
                    bytes.replaceSubrange(digit...digit, with: Array(replacement.utf8))
                }
            }
        }
        return Array(bytes.prefix(FuzzSmokeTests.longestInput * 2))
    }
}

extension Mutator: RandomNumberGenerator {}
