import Foundation
import XCTest
@testable import Capture

/// The apps' payloads → fixes, each value checked where `Fix` checks it.
final class PhonePayloadTests: XCTestCase {
    func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Fixtures.root.appendingPathComponent("phone").appendingPathComponent(name)))
    }

    func testEachFixtureGivesItsPointsInSIUnits() throws {
        let owntracks = try PhonePayload.parse(.owntracks, PhoneMessage(contentType: "application/json", body: fixture("owntracks-location.json")))
        XCTAssertEqual(owntracks.fixes.count, 1)
        XCTAssertEqual(owntracks.fixes[0].speed, 5, "18 km/h")
        XCTAssertEqual(owntracks.fixes[0].course, 270)
        XCTAssertEqual(owntracks.fixes[0].timestamp, Date(timeIntervalSince1970: 1_795_000_000))
        XCTAssertEqual(owntracks.fixes[0].source, .phone)
        for other in ["owntracks-transition.json", "owntracks-status.json"] {
            XCTAssertEqual(try PhonePayload.parse(.owntracks, PhoneMessage(body: fixture(other))).fixes, [], other)
        }
        let overland = try PhonePayload.parse(.overland, PhoneMessage(contentType: "application/json; charset=utf-8", body: fixture("overland-batch.json")))
        XCTAssertEqual(overland.fixes.map(\.timestamp.timeIntervalSince1970), [1_795_014_000, 1_795_014_030, 1_795_014_300])
        XCTAssertEqual(overland.fixes.map(\.speed), [4, nil, 13.4])
        XCTAssertEqual(overland.fixes.map(\.course), [nil, nil, 181.5])
        XCTAssertEqual(overland.fixes[0].longitude, -122.030581)
        let query = try String(decoding: fixture("gpslogger-query.txt"), as: UTF8.self)
        let gpslogger = try PhonePayload.parse(.gpslogger, PhoneMessage(query: query))
        XCTAssertEqual(gpslogger.fixes.first?.horizontalAccuracy, 8)
        XCTAssertEqual(gpslogger.statedDevice, "3f2b9c1d0e8a7b66")
        let form = try PhonePayload.parse(.gpslogger, PhoneMessage(contentType: "application/x-www-form-urlencoded", body: fixture("gpslogger-all-form.txt")))
        XCTAssertEqual(form.fixes.first?.timestamp, Date(timeIntervalSince1970: 1_795_003_700))
        let json = try PhonePayload.parse(.gpslogger, PhoneMessage(contentType: "application/json", body: fixture("gpslogger-json.json")))
        XCTAssertEqual(json.fixes.first?.latitude, 48.86)
        let osmand = try PhonePayload.parse(.traccar, PhoneMessage(query: String(decoding: fixture("traccar-osmand-query.txt"), as: UTF8.self)))
        XCTAssertEqual(try XCTUnwrap(osmand.fixes.first?.speed), 5.2 * 0.514_444, accuracy: 0.001)
        XCTAssertEqual(osmand.statedDevice, "phone")
        let milliseconds = try PhonePayload.parse(.traccar, PhoneMessage(query: String(decoding: fixture("traccar-osmand-location-ms.txt"), as: UTF8.self)))
        XCTAssertEqual(milliseconds.fixes.first?.timestamp, Date(timeIntervalSince1970: 1_795_007_260))
        XCTAssertEqual(milliseconds.fixes.first?.latitude, -33.857001)
        let client = try PhonePayload.parse(.traccar, PhoneMessage(contentType: "application/json", body: fixture("traccar-client.json")))
        XCTAssertNil(client.fixes.first?.course, "heading -1 is unknown")
        XCTAssertEqual(try PhonePayload.parse(.traccar, PhoneMessage(body: fixture("traccar-push-token.txt"))).fixes, [])
    }

    /// Every kind of JSON value becomes its own `PhoneJSON`: true and false are no numbers, 1 and
    /// 0 no booleans, nested containers and strings with escapes come through whole.
    func testJSONValuesKeepTheirKinds() throws {
        let text = #"{"t":true,"f":false,"one":1,"zero":0,"x":-2.5e3,"n":null,"s":"caf\u00e9 \"q\"","a":[1,[true,null],{"k":"v"}],"o":{}}"#
        let decoded = try PhoneJSON.decode(Array(text.utf8), .owntracks)
        XCTAssertEqual(decoded, .object([
            "t": .bool(true), "f": .bool(false), "one": .number(1), "zero": .number(0), "x": .number(-2500), "n": .null,
            "s": .string("café \"q\""), "a": .array([.number(1), .array([.bool(true), .null]), .object(["k": .string("v")])]),
            "o": .object([:]),
        ]))
        XCTAssertEqual(try PhoneJSON.decode(Array("[\"x\", 2]".utf8), .owntracks), .array([.string("x"), .number(2)]))
        XCTAssertEqual(try PhoneJSON.decode(Array("false".utf8), .owntracks), .bool(false))
    }

    /// Numbers and times given as text may have spaces around them (ASCII or not); without, they
    /// are read as they are.
    func testSpacesAroundTextValuesAreTrimmed() throws {
        for (query, time) in [("lat=%201.5&lon=2%09&timestamp=%C2%A01795000000%E2%80%83", 1_795_000_000.0),
                              ("lat=1.5&lon=2&time=%202026-11-18T11:06:40Z%20", 1_795_000_000.0),
                              ("lat=1.5&lon=2&timestamp=1795000000", 1_795_000_000.0)] {
            let fix = try XCTUnwrap(PhonePayload.parse(.gpslogger, PhoneMessage(query: query)).fixes.first, query)
            XCTAssertEqual(fix.latitude, 1.5, query)
            XCTAssertEqual(fix.longitude, 2, query)
            XCTAssertEqual(fix.timestamp.timeIntervalSince1970, time, query)
        }
        XCTAssertEqual(PhoneValues.trimmed("\u{2003}x\u{00A0}"), "x")
        XCTAssertEqual(PhoneValues.trimmed("a b"), "a b")
    }

    /// An Overland batch read by yajl as a stream gives the values the whole document read
    /// through `PhoneJSON` gives (the reading where yajl is missing), for strange batches too.
    func testOverlandBatchReadAsAStreamIsTheDocumentsReading() throws {
        XCTAssertTrue(OverlandBatch.yajlLoads)
        let bodies = [
            String(decoding: try fixture("overland-batch.json"), as: UTF8.self),
            #"{"locations":[]}"#, #"{"locations":{}}"#, #"{"locations":null}"#, "[1,2]", "7", #"{"other":[{"type":"Feature"}]}"#,
            #"{"locations":[1,"x",null,[],{}]}"#,
            #"{"locations":[{"geometry":{"type":"Point","coordinates":[1,2,3,[4],{"a":1}]},"properties":{"timestamp":"2026-11-18T11:06:40Z","altitude":null,"speed":"1.5","course":[1],"horizontal_accuracy":{"x":[1]},"device_id":"d","motion":["walking"],"battery_level":0.5}}]}"#,
            #"{"locations":[{"geometry":[1],"properties":[1]},{"geometry":{"type":["Point"],"coordinates":"1,2"}},{"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}},{"geometry":null,"properties":"p"}]}"#,
            #"{"locations":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1.5,-2.25e1]},"properties":{"timestamp":1795000000,"device_id":7}}],"current":{"geometry":{"type":"Point","coordinates":[9,9]}},"trip":{}}"#,
            #"{"a":{"locations":[{}]},"locations":[{"properties":{"timestamp":true,"speed":"caf\u00e9"}}],"b":[{"locations":1}]}"#,
            "\u{FEFF}{\"locations\":[{\"geometry\":{\"coordinates\":[0.1,0.2],\"type\":\"Point\"}}]}",
        ]
        for body in bodies {
            let streamed = try OverlandBatch.streamed(Array(body.utf8))
            XCTAssertEqual(streamed, OverlandBatch(try PhoneJSON.decode(Array(body.utf8), .overland)), body)
        }
        XCTAssertEqual(try OverlandBatch.streamed(Array(bodies[10].utf8)).locations?.first?.coordinates, [.number(1.5), .number(-22.5)])
        for bad in ["", "{", #"{"locations": ["#, "[1,2] x", #"{"locations":[{"a":"\u00"}]}"#, #"{"locations":[{"geometry":{"coordinates":[1e400,2]}}]}"#] {
            XCTAssertThrowsError(try OverlandBatch.streamed(Array(bad.utf8)), bad) { error in
                guard case .notJSON(.overland, _)? = error as? PhonePayloadError else { return XCTFail("\(error)") }
            }
        }
    }

    func testEveryValueOutOfRangeIsRefusedWithItsName() {
        let cases: [(PhoneProtocol, PhoneMessage, String)] = [
            (.owntracks, PhoneMessage(body: Array(#"{"_type":"location","lat":91,"lon":0,"tst":1795000000}"#.utf8)), "latitude 91"),
            (.owntracks, PhoneMessage(body: Array(#"{"_type":"location","lat":1,"lon":0,"tst":1795000000,"vel":99999}"#.utf8)), "speed"),
            (.owntracks, PhoneMessage(body: Array(#"{"_type":"location","lat":1,"lon":0}"#.utf8)), "tst"),
            (.owntracks, PhoneMessage(body: Array(#"{"_type":"location","lat":true,"lon":0,"tst":1}"#.utf8)), "lat"),
            (.overland, PhoneMessage(body: Array(#"{"locations":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"timestamp":"2026-02-30T00:00:00Z"}}]}"#.utf8)), "time"),
            (.gpslogger, PhoneMessage(query: "lat=1&lon=2&timestamp=99999999999999"), "time"),
            (.gpslogger, PhoneMessage(query: "lat=1&lon=2&timestamp=1795000000&alt=1e9"), "altitude"),
            (.traccar, PhoneMessage(query: "id=x&location=1&timestamp=1795000000"), "lat,lon"),
            (.traccar, PhoneMessage(query: "id=x&lat=nan&lon=2&timestamp=1795000000"), "latitude"),
        ]
        for (app, message, named) in cases {
            XCTAssertThrowsError(try PhonePayload.parse(app, message), "\(app) \(message)") { error in
                XCTAssertTrue((error as? PhonePayloadError)?.reason.contains(named) == true, "\(error) should name \(named)")
            }
        }
    }

    /// Fuzzing (issue 33): a time no calendar holds (1e300 seconds, as a JSON number or in a form)
    /// is refused like any other time outside `Fix.Limits.time`, with a one-line message; printing
    /// it for that message trapped (Int64 of its milliseconds) and took `enlog serve` down.
    func testATimePastAnyCalendarIsRefusedWithOneLine() {
        let cases: [(PhoneProtocol, PhoneMessage)] = [
            (.owntracks, PhoneMessage(body: Array(#"{"_type":"location","lat":1,"lon":2,"tst":1e300}"#.utf8))),
            (.owntracks, PhoneMessage(body: Array(#"{"_type":"location","lat":1,"lon":2,"tst":-1e300}"#.utf8))),
            (.overland, PhoneMessage(body: Array(#"{"locations":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"timestamp":1e300}}]}"#.utf8))),
            (.gpslogger, PhoneMessage(query: "lat=1&lon=2&timestamp=1e300")),
            (.traccar, PhoneMessage(query: "id=x&lat=1&lon=2&timestamp=-9e18")),
            (.traccar, PhoneMessage(contentType: "application/json",
                                    body: Array(#"{"location":{"timestamp":1e300,"coords":{"latitude":1,"longitude":2}}}"#.utf8))),
        ]
        for (app, message) in cases {
            XCTAssertThrowsError(try PhonePayload.parse(app, message), "\(app) \(message)") { error in
                let reason = (error as? PhonePayloadError)?.reason ?? ""
                XCTAssertTrue(reason.contains("time ") && reason.contains("outside"), "\(error) should name the time")
                XCTAssertFalse(reason.contains(where: \.isNewline))
            }
        }
    }
}
