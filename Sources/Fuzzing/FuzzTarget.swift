import Support

/// A parser of outside input driven the way enlog drives it, on one input at a time: what each
/// libFuzzer target (Fuzz/<name>/, built and run by scripts/fuzz) runs, and what the regression
/// tests run the inputs it once failed on through (Tests/Fixtures/fuzz/<name>/).
///
/// An input may make the parser fail, with the error enlog reports; it must not crash it, leak,
/// hang or exhaust memory, and it must not break the promises a target checks beyond that (a
/// geocoder's reply never makes a note that cannot be stored): those throw a `FuzzFinding`.
package struct FuzzTarget: Sendable {
    package let name: String
    private let body: @Sendable ([UInt8]) throws(FuzzFinding) -> Void

    init(_ name: String, _ body: @escaping @Sendable ([UInt8]) throws(FuzzFinding) -> Void) {
        self.name = name
        self.body = body
    }

    package func run(_ input: [UInt8]) throws(FuzzFinding) {
        try body(input)
    }

    /// libFuzzer's call (`LLVMFuzzerTestOneInput`): a broken promise stops the process as a
    /// crash does, so that libFuzzer keeps the input.
    package func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
        do {
            try run(Array(UnsafeBufferPointer(start: data, count: size)))
        } catch {
            fatalError("fuzz-\(name): \(error)")
        }
        return 0
    }

    package static let all: [FuzzTarget] = [.nmea, .gpx, .track, .gpsd, .exif, .enml, .thrift, .tile, .geocoder, .oauth, .config, .template,
                                                .owntracks, .overland, .gpslogger, .traccar]
}

/// Builds the message enlog prints for `error`, which must be one of enlog's errors (they name
/// their category and exit status) and one line, whatever text of the input it quotes.
func explain(_ error: any Error) throws(FuzzFinding) {
    guard error is any ENLogError else { throw FuzzFinding(description: "not an enlog error, so no clear message: \(error)") }
    let message = message(of: error)
    if message.contains(where: \.isNewline) { throw FuzzFinding(description: "a message of more than one line: \(message)") }
}

/// What enlog prints for `error`: its reason and what to do about it.
func message(of error: any Error) -> String {
    guard let error = error as? any ENLogError else { return "\(error)" }
    return error.reason + (error.recoverySuggestion.map { " (\($0))" } ?? "")
}

/// A promise an input broke without crashing anything.
package struct FuzzFinding: Error, CustomStringConvertible {
    package let description: String
}
