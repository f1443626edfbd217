import Capture
import Compose
import Foundation

/// What a note is made of: ENML, map tiles, the geocoder's address, templates and messages.
extension FuzzTarget {
    private static let evernoteRules = ENMLValidator(rules: .evernote)
    private static let dtdOnly = ENMLValidator(rules: .dtdOnly)

    /// A note's ENML, validated as `enlog validate` and the note renderer validate it, and as an
    /// XML parser with the DTD alone does.
    package static let enml = FuzzTarget("enml") { bytes throws(FuzzFinding) in
        bytes.withUnsafeBufferPointer { buffer in
            _ = evernoteRules.validate(bytes: buffer)
            _ = dtdOnly.validate(bytes: buffer)
        }
    }

    /// A map tile or static map from a tile server, both ways CMapShim's libpng decodes it: into
    /// an image of its own when it is downloaded (`TileFetcher` refuses what does not decode; a
    /// static map is re-encoded), and straight into the canvas when a cached tile is drawn into a
    /// map, here as two placements clipped by the canvas's four edges.
    package static let tile = FuzzTarget("tile") { bytes throws(FuzzFinding) in
        if case .success(let image) = CairoPNG.decode(bytes) {
            _ = try? CairoPNG.encode(image)
        }
        // Maps draw 256-pixel tiles; a smaller square image is drawn at its own size, so that
        // small inputs reach the direct path too (any other size is decoded by cairo and scaled).
        var side = 256
        if CairoPNG.structureProblem(bytes) == nil {
            let width = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }, height = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
            if width == height, width <= 256 { side = width }
        }
        guard let canvas = try? MapCanvas(width: 2 * side - side / 2, height: side + side / 4) else { return }
        _ = try? canvas.paintPNGs([MapCanvas.PNGPlacement(bytes: bytes, x: -side / 4, y: -side / 3),
                                   MapCanvas.PNGPlacement(bytes: bytes, x: 3 * side / 4, y: side / 2)],
                                  size: side, workers: 1)
    }

    private static let style = NoteStyle(timeZone: TimeZone(identifier: "UTC")!)
    private static let builtIn = NoteRenderer(style: style)
    private static let fix = try! Fix(latitude: -33.856784, longitude: 151.215297, altitude: 4, horizontalAccuracy: 8,
                                      speed: 1.2, timestamp: Date(timeIntervalSince1970: 1_764_000_000), source: .gpsd)
    private static let place = Place(address: "Bennelong Point, Sydney NSW 2000 & <Harbour>", displayName: "Sydney Opera House")

    /// A reverse-geocoding reply from Nominatim, read as `enlog log` reads it, and the address it
    /// gives put into a note: whatever the server says, the note must render and validate.
    package static let geocoder = FuzzTarget("geocoder") { bytes throws(FuzzFinding) in
        let address: Address
        do {
            address = try NominatimReply.parse(bytes)
        } catch {
            try explain(error)
            return
        }
        _ = address.streetLine
        do {
            _ = try builtIn.render(fix: fix, place: Place(address: address.formatted, displayName: address.displayName), uid: "fuzz")
        } catch {
            throw FuzzFinding(description: "a geocoder reply made a note that cannot be stored: \(message(of: error))")
        }
    }

    private static let map = MapReference(hash: String(repeating: "ab", count: 16), width: 600, height: 400)
    private static let photo = NoteResource(hash: String(repeating: "cd", count: 16), body: Data(), mime: "image/jpeg",
                                            width: 64, height: 48, fileName: "IMG <1> & 2.jpg", latitude: nil, longitude: nil,
                                            userFile: true)

    /// A note template (`note.template`) and a diary message (`--message`), as NUL-separated
    /// parts: title.mustache, content.mustache, then the message. The template is parsed and
    /// rendered with every value a note can have, failing with a `NoteError` if at all. The
    /// message, whatever it holds, must make a valid note with the built-in template.
    package static let template = FuzzTarget("template") { bytes throws(FuzzFinding) in
        let parts = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let words = parts.count > 2 ? parts[2] : nil
        do {
            let template = try NoteTemplate(name: "fuzz", title: parts[0], content: parts.count > 1 ? parts[1] : "")
            _ = try NoteRenderer(template: template, style: style)
                .render(fix: fix, place: place, uid: "fuzz", map: map, entry: DiaryEntry(message: words, attachments: [photo]))
        } catch {
            try explain(error)
        }
        do {
            _ = try builtIn.render(fix: fix, place: place, uid: "fuzz", entry: DiaryEntry(message: words))
        } catch {
            throw FuzzFinding(description: "a message made a note that cannot be stored: \(message(of: error))")
        }
    }
}
