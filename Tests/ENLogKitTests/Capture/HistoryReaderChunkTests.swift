import Foundation
import Testing
@testable import Capture

/// The readers are push parsers: however a file is cut into chunks (1 byte, 7, 4096, whole), the
/// same items come out, and the same error at the same place. Checked on every real export a
/// reader of this branch recognizes and on small documents with each format's oddities.
@Suite("history readers give the same result for any chunking")
struct HistoryReaderChunkTests {
    /// Items, or the error, of `bytes` fed `size` bytes at a time (nil: whole).
    static func read(_ bytes: [UInt8], chunk size: Int?) -> String {
        let content = HistoryReaders.withoutByteOrderMark(bytes[...])
        guard let kind = HistoryReaders.kind(for: content.prefix(HistoryReaders.prefixLength)) else { return "unrecognized" }
        var reader = kind.make("file")
        var items: [HistoryItem] = []
        do {
            var start = content.startIndex
            repeat {
                let end = size.map { min(content.endIndex, start + $0) } ?? content.endIndex
                try reader.feed(content[start..<end]) { items.append($0) }
                start = end
            } while start < content.endIndex
            try reader.finish { items.append($0) }
            return "\(kind.format): \(items)"
        } catch {
            return "\(kind.format): \(items.count) items, then \(error)"
        }
    }

    static let realFiles: [String] = {
        let folder = ImportRealDataTests.folder.path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.range(of: #"^(gpx|gpslogger-gpx|strava-gpx|kml|tcx|csv|owntracks-rec)--"#, options: .regularExpression) != nil }
            .sorted().map { folder + "/" + $0 }
    }()

    @Test func thereAreRealFiles() {
        #expect(Self.realFiles.count >= 60)
    }

    @Test(arguments: realFiles)
    func realExportReadsAlikeInAnyChunks(_ path: String) throws {
        let bytes = try #require(FileManager.default.contents(atPath: path)).map { $0 }
        let whole = Self.read(bytes, chunk: nil)
        for size in bytes.count < 40_000 ? [1, 7, 4096] : [7, 4096] {
            #expect(Self.read(bytes, chunk: size) == whole, "\(path) in chunks of \(size)")
        }
    }

    /// Oddities of each format, small enough to feed a byte at a time.
    static let documents: [String] = [
        // GPX: a blank line before <?xml, 1970 and 0,0 counted as skipped, a route point without a time.
        "\n\n<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\"><rte><rtept lat=\"1\" lon=\"2\"/></rte><trk><trkseg>"
            + "<trkpt lat=\"48.1\" lon=\"11.5\"><ele>520</ele><time>2026-11-22T08:00:00Z</time></trkpt>"
            + "<trkpt lat=\"48.1\" lon=\"11.5\"><time>1970-01-01T00:00:03Z</time></trkpt>"
            + "<trkpt lat=\"0\" lon=\"0\"><time>2026-11-22T08:00:01Z</time></trkpt></trkseg></trk></gpx>\n",
        // GPX cut short: an error at its line, after the points it had.
        "<gpx xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n<trkpt lat=\"48.1\" lon=\"11.5\"><time>2026-11-22T08:00:00Z</time></trkpt>\n<trkpt lat=\"48",
        // KML: gx:Track with a pause, a timed Placemark, a TimeSpan stay.
        """
        <kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2"><Document>
        <Placemark><gx:Track><when>2024-01-01T10:00:00Z</when><when>2024-01-01T10:00:05Z</when><gx:coord/><gx:coord>13.4 52.5 30</gx:coord></gx:Track></Placemark>
        <Placemark><TimeStamp><when>2024-01-01T11:00:00+01:00</when></TimeStamp><Point><coordinates>13.41,52.51,0</coordinates></Point></Placemark>
        <Placemark><name>Home</name><TimeSpan><begin>2024-01-01T12:00:00Z</begin><end>2024-01-01T18:00:00Z</end></TimeSpan><Point><coordinates>13.42,52.52</coordinates></Point></Placemark>
        </Document></kml>
        """,
        // TCX: a point without a position.
        """
        <?xml version="1.0"?>\r\n<TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"><Activities><Activity><Lap><Track>\r
        <Trackpoint><Time>2024-01-01T10:00:00Z</Time><Position><LatitudeDegrees>52.5</LatitudeDegrees><LongitudeDegrees>13.4</LongitudeDegrees></Position><AltitudeMeters>34</AltitudeMeters></Trackpoint>\r
        <Trackpoint><Time>2024-01-01T10:00:01Z</Time><HeartRateBpm><Value>120</Value></HeartRateBpm></Trackpoint>\r
        </Track></Lap></Activity></Activities></TrainingCenterDatabase>
        """,
        // CSV: quoted header, E7 integers, a device, a row without a time, CRLF.
        "\"timestamp\",\"latitudeE7\",\"longitudeE7\",\"deviceid\"\r\n2024-06-15T10:30:00Z,525200000,134050000,a\r\n2024-06-15T10:30:00Z,525200001,134050001,b\r\n,525200000,134050000,a\r\n",
        // CSV: hemisphere suffixes, semicolons with decimal commas.
        "time;LATITUDE N/S;LONGITUDE E/W;speed\n2024-06-15 10:30:00 +02:00;33,5S;70,1W;1,5\n1718444200;52,5N;13,4E;\n",
        // OwnTracks .rec: tab and spaces, `*` and `-`, a transition, vel -1 (unknown).
        "2015-08-24T05:55:07Z\t*                 \t{\"tst\":1440395361,\"acc\":30,\"_type\":\"location\",\"lon\":10.02,\"vel\":-1,\"lat\":52.37,\"tid\":\"NE\"}\n"
            + "2015-08-24T05:55:14Z  -     {\"tst\":\"1440363922\",\"_type\":\"lwt\"}\n"
            + "2015-08-24T05:56:00Z\t*\t{\"_type\":\"location\",\"lat\":52.38,\"lon\":10.03,\"tst\":\"1440395400\",\"vel\":18}\n",
        // NMEA with a comment line.
        "# logged by gpspipe\n$GPRMC,080000.00,A,4807.038,N,01131.000,E,0.0,0.0,221126,,,A*6A\n$GPGGA,080000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*4B\n",
    ]

    @Test(arguments: documents)
    func oddDocumentReadsAlikeInAnyChunks(_ document: String) {
        let bytes = Array(document.utf8)
        let whole = Self.read(bytes, chunk: nil)
        #expect(whole != "unrecognized", "\(document.prefix(60))")
        for size in [1, 7, 4096] {
            #expect(Self.read(bytes, chunk: size) == whole, "chunks of \(size): \(document.prefix(60))")
        }
    }

    /// What the oddities become: skipped and counted, not lost silently nor fatal.
    @Test func odditiesAreCountedByReason() {
        let gpx = Self.read(Array(Self.documents[0].utf8), chunk: 7)
        #expect(gpx.contains("skipped(Capture.HistorySkip.noTime)") && gpx.contains("timeOutOfRange") && gpx.contains("nullIsland"), "\(gpx)")
        let cut = Self.read(Array(Self.documents[1].utf8), chunk: 7)
        #expect(cut.contains("1 items, then") && cut.contains("line(3)"), "\(cut)")
        let kml = Self.read(Array(Self.documents[2].utf8), chunk: 7)
        #expect(kml.contains("badPosition") && kml.contains("visit(") && kml.contains("Home"), "\(kml)")
        let csv = Self.read(Array(Self.documents[4].utf8), chunk: 7)
        #expect(csv.contains("\"a\"") && csv.contains("\"b\"") && csv.contains("noTime"), "\(csv)")
        let rec = Self.read(Array(Self.documents[6].utf8), chunk: 7)
        #expect(rec.contains("notAPoint") && rec.contains("speed: Optional(5.0)") && rec.contains("speed: nil"), "\(rec)")
    }
}
