import Foundation
import XCTest

/// Files for diary tests made by real tools: Pillow draws the images and writes the PDF,
/// exiftool (Debian libimage-exiftool-perl) writes GPS tags into a JPEG and reads them back.
enum TestFiles {
    struct ToolFailure: Error, CustomStringConvertible { let description: String }

    /// An image or PDF made by Pillow: `format` is "JPEG", "PNG", "GIF" or "PDF".
    @discardableResult
    static func image(_ path: String, format: String, width: Int = 64, height: Int = 48) throws -> String {
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let script = """
            import sys
            from PIL import Image, ImageDraw
            w, h = int(sys.argv[3]), int(sys.argv[4])
            image = Image.new("RGB", (w, h), (40, 120, 200))
            ImageDraw.Draw(image).rectangle((w // 4, h // 4, w // 2, h // 2), fill=(250, 200, 0))
            image.save(sys.argv[1], sys.argv[2])
            """
        let result = try Subprocess.run(URL(fileURLWithPath: python), ["-c", script, path, format, "\(width)", "\(height)"])
        guard result.status == 0 else { throw ToolFailure(description: "Pillow could not write \(format): \(result.standardError)") }
        return path
    }

    static var exiftool: URL {
        get throws {
            guard let tool = Subprocess.which("exiftool") else {
                if ProcessInfo.processInfo.environment["CI"] == "true" {
                    throw ToolFailure(description: "exiftool is not installed (Debian libimage-exiftool-perl)")
                }
                throw XCTSkip("exiftool is not installed (Debian libimage-exiftool-perl)")
            }
            return tool
        }
    }

    /// A JPEG (or `format`) from Pillow with these EXIF tags written by exiftool (`Tag=value` each).
    @discardableResult
    static func photo(_ path: String, tags: [String], format: String = "JPEG", width: Int = 64, height: Int = 48) throws -> String {
        try image(path, format: format, width: width, height: height)
        guard !tags.isEmpty else { return path }
        let result = try Subprocess.run(try exiftool, ["-q", "-overwrite_original"] + tags.map { "-\($0)" } + [path])
        guard result.status == 0 else { throw ToolFailure(description: "exiftool failed: \(result.standardError)") }
        return path
    }

    /// What exiftool reads back, numbers as numbers (`-n`): the independent view of the tags.
    static func exif(_ path: String) throws -> [String: Any] {
        let result = try Subprocess.run(try exiftool, ["-n", "-json", "-GPS:all", "-DateTimeOriginal", "-OffsetTimeOriginal", path])
        guard result.status == 0,
              let list = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]],
              let first = list.first else { throw ToolFailure(description: "exiftool could not read \(path): \(result.standardError)") }
        return first
    }

    /// The GPS tags of a photo taken at this place and moment (refs from the signs, as cameras write them).
    static func gpsTags(latitude: Double, longitude: Double, altitude: Double? = nil, utc: String,
                        takenAt local: String? = nil, offset: String? = nil, accuracy: Double? = nil) -> [String] {
        var tags = ["GPSLatitude=\(abs(latitude))", "GPSLatitudeRef=\(latitude < 0 ? "S" : "N")",
                    "GPSLongitude=\(abs(longitude))", "GPSLongitudeRef=\(longitude < 0 ? "W" : "E")"]
        if let altitude { tags += ["GPSAltitude=\(abs(altitude))", "GPSAltitudeRef#=\(altitude < 0 ? 1 : 0)"] }
        let parts = utc.split(separator: " ")
        tags += ["GPSDateStamp=\(parts[0])", "GPSTimeStamp=\(parts[1])"]
        if let local { tags.append("DateTimeOriginal=\(local)") }
        if let offset { tags.append("OffsetTimeOriginal=\(offset)") }
        if let accuracy { tags.append("GPSHPositioningError=\(accuracy)") }
        return tags
    }
}

extension EnlogHome {
    /// The history as `enlog history --json` prints it.
    func history() throws -> [[String: Any]] {
        let result = try run("history", "--json")
        guard result.status == 0 else { throw TestFiles.ToolFailure(description: result.standardError) }
        return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]] ?? []
    }

    /// `queue show ID --json`.
    func show(_ id: Int) throws -> [String: Any] {
        let result = try run("queue", "show", "\(id)", "--json")
        guard result.status == 0 else { throw TestFiles.ToolFailure(description: result.standardError) }
        return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any] ?? [:]
    }
}
