@testable import Capture
import Foundation
import XCTest

/// The oddities real exports carry, one reader at a time, each read whole and one byte at a time.
final class JSONHistoryReaderTests: XCTestCase {
    private func read(_ format: HistoryFormat, _ json: String, file: StaticString = #filePath, line: UInt = #line) -> JSONHistoryOutcome {
        let bytes = Array(json.utf8)
        XCTAssertEqual(JSONHistorySniffer.format(of: bytes[...]), format, "recognized", file: file, line: line)
        let whole = JSONHistoryOutcome.read(format, bytes, chunkSize: bytes.count)
        XCTAssertEqual(JSONHistoryOutcome.read(format, bytes, chunkSize: 1), whole, "byte by byte", file: file, line: line)
        XCTAssertNil(whole.error, file: file, line: line)
        return whole
    }

    /// Overland's `motion`: a run of points of one motion is one segment of that mode; "stationary"
    /// ends it, so does a quarter of an hour without a point (a morning's run and an evening's are
    /// two), and one point alone is none. The `-0700` of a timestamp is kept as its offset.
    func testOverlandMotionRunsAreSegments() throws {
        func feature(_ time: String, _ motion: String) -> String {
            """
            {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-122.03, 37.33]},
             "properties": {"timestamp": "\(time)", "motion": [\(motion)], "device_id": "phone"}}
            """
        }
        let outcome = read(.geojson, """
        {"locations": [\([
            feature("2024-07-07T08:00:00-0700", "\"running\""), feature("2024-07-07T08:05:00-0700", "\"running\""),
            feature("2024-07-07T08:06:00-0700", "\"stationary\""),
            feature("2024-07-07T08:07:00-0700", "\"driving\", \"stationary\""), feature("2024-07-07T08:20:00-0700", "\"driving\""),
            feature("2024-07-07T18:00:00-0700", "\"driving\""), feature("2024-07-07T18:10:00-0700", "\"driving\""),
            feature("2024-07-07T19:00:00-0700", "\"walking\"")
        ].joined(separator: ","))]}
        """)
        let base = 1_720_364_400.0   // 2024-07-07T08:00:00-07:00
        XCTAssertEqual(outcome.points.count, 8)
        XCTAssertEqual(outcome.points.first?.utcOffset, -7 * 3600)
        XCTAssertEqual(outcome.segments.map { [$0.start.timeIntervalSince1970 - base, $0.end.timeIntervalSince1970 - base] },
                       [[0, 300], [420, 1200], [36_000, 36_600]])
        XCTAssertEqual(outcome.segments.map(\.mode), ["running", "driving", "driving"])
        XCTAssertEqual(outcome.segments.map(\.distance), [nil, nil, nil])
    }

    func testRecordsEveryEraAndItsOddities() throws {
        let outcome = read(.googleRecords, """
        {"locations": [
          {"timestampMs": "1500000000000", "latitudeE7": 4294067296, "longitudeE7": 4284967296, "accuracy": "12",
           "heading": -1, "velocity": 3, "altitude": 120, "deviceTag": -1613859921,
           "activity": [{"timestampMs": "1600000000000", "activity": [{"type": "STILL", "confidence": 100}]}]},
          {"timestamp": "2014-01-01T00:00:00.500Z", "latitudeE7": 485000000, "longitudeE7": 23000000, "deviceTag": 7},
          {"deviceTimestamp": "2014-01-02T00:00:00Z", "serverTimestamp": "2014-01-03T00:00:00Z", "latitudeE7": 1, "longitudeE7": 2},
          {"timestampMs": "0", "latitudeE7": 0, "longitudeE7": 0},
          {"timestampMs": "1000", "latitudeE7": 10, "longitudeE7": 10},
          {"timestampMs": "PQDBzddkzaKBJhfJejAn", "latitudeE7": 10, "longitudeE7": 10},
          {"latitudeE7": 10, "longitudeE7": 10},
          {"timestampMs": "1500000000000", "latitudeE7": 950000000, "longitudeE7": 10},
          {"timestampMs": "1500000000000", "activity": []}
        ]}
        """)
        XCTAssertEqual(outcome.points.count, 3)
        let first = try XCTUnwrap(outcome.points.first)
        // 4294067296 - 2^32 = -900000 (E7), wrapped as Google describes.
        XCTAssertEqual(first.fix.latitude, -0.09, accuracy: 1e-12)
        XCTAssertEqual(first.fix.longitude, -1.0, accuracy: 1e-12)
        XCTAssertEqual(first.fix.timestamp.timeIntervalSince1970, 1_500_000_000, "the nested activity's time is not the point's")
        XCTAssertEqual(first.fix.horizontalAccuracy, 12, "a quoted number is a number")
        XCTAssertNil(first.fix.course, "heading -1 means unknown: dropped, the point kept")
        XCTAssertEqual(first.fix.speed, 3)
        XCTAssertEqual(first.fix.altitude, 120)
        XCTAssertEqual(first.fix.source, .imported)
        XCTAssertEqual(first.device, "-1613859921")
        XCTAssertEqual(outcome.points[1].fix.timestamp.timeIntervalSince1970, 1_388_534_400.5)
        XCTAssertEqual(outcome.points[1].device, "7")
        XCTAssertEqual(outcome.points[2].fix.timestamp.timeIntervalSince1970, 1_388_620_800, "deviceTimestamp before serverTimestamp")
        XCTAssertEqual(outcome.skipped, ["0,0 position": 1, "time that is no date": 1, "time out of range": 1, "no time": 1,
                                         "position that cannot be": 1, "record that is not a point": 1])
    }

    func testSemanticVisitsSegmentsAndPaths() throws {
        let outcome = read(.googleSemantic, """
        {"timelineObjects": [
          {"placeVisit": {"location": {"latitudeE7": 523700000, "longitudeE7": 48900000, "placeId": "ChIJ1",
            "name": "Café", "address": "Dam 1", "semanticType": "TYPE_HOME"},
            "duration": {"startTimestampMs": "1609459200000", "endTimestampMs": "1609462800000"},
            "childVisits": [{"location": {"latitudeE7": 1, "longitudeE7": 1}}],
            "otherCandidateLocations": [{"latitudeE7": 2, "longitudeE7": 2}]}},
          {"activitySegment": {"startLocation": {"latitudeE7": 523700000, "longitudeE7": 48900000},
            "endLocation": {"latitudeE7": 523800000, "longitudeE7": 49000000},
            "duration": {"startTimestamp": "2021-01-01T01:00:00Z", "endTimestamp": "2021-01-01T01:30:00.000Z"},
            "distance": 1520, "activities": [{"activityType": "CYCLING"}, {"activityType": "WALKING"}],
            "waypointPath": {"waypoints": [{"latE7": 523750000, "lngE7": 48950000}, {"latE7": 1, "lngE7": 1}]},
            "simplifiedRawPath": {"points": [{"latE7": 523760000, "lngE7": 48960000, "timestampMs": "1609463400000", "accuracyMeters": 9}]}}}
        ]}
        """)
        let visit = try XCTUnwrap(outcome.visits.first)
        XCTAssertEqual(outcome.visits.count, 1)
        XCTAssertEqual(visit, HistoryVisit(start: Date(timeIntervalSince1970: 1_609_459_200), end: Date(timeIntervalSince1970: 1_609_462_800),
                                           latitude: 52.37, longitude: 4.89, name: "Café", address: "Dam 1",
                                           placeId: "ChIJ1", semanticType: "TYPE_HOME"))
        XCTAssertEqual(outcome.points.map(\.fix.timestamp.timeIntervalSince1970), [1_609_463_400, 1_609_462_800, 1_609_464_600])
        XCTAssertEqual(outcome.points.first?.fix.horizontalAccuracy, 9)
        XCTAssertEqual(outcome.skipped, [:], "waypoints are the segment's, in order between its timed ends")
        typealias Waypoint = HistorySegment.Waypoint
        XCTAssertEqual(outcome.segments, [HistorySegment(start: Date(timeIntervalSince1970: 1_609_462_800), end: Date(timeIntervalSince1970: 1_609_464_600),
                                                         startPoint: Waypoint(latitude: 52.37, longitude: 4.89),
                                                         endPoint: Waypoint(latitude: 52.38, longitude: 4.9), distance: 1520,
                                                         mode: "CYCLING", waypoints: [Waypoint(latitude: 52.375, longitude: 4.895),
                                                                                      Waypoint(latitude: 1e-7, longitude: 1e-7)])],
                       "the source's distance, its likeliest activity (no activityType), the waypoints in order")
    }

    func testAndroidDegreeSignsRawSignalsAndFrequentPlaces() throws {
        let outcome = read(.androidTimeline, #"""
        {"semanticSegments": [
          {"startTime": "2024-01-01T10:00:00.000+01:00", "endTime": "2024-01-01T11:00:00.000+01:00",
           "visit": {"topCandidate": {"placeId": "P1", "semanticType": "HOME", "placeLocation": {"latLng": "48.85\u00b0, 2.35\u00b0"}}}},
          {"startTime": "2024-01-01T11:00:00Z", "endTime": "2024-01-01T12:00:00Z",
           "activity": {"start": {"latLng": "-27.41°, 163.56°"}, "end": {"latLng": "48.86, 2.36"}, "distanceMeters": 900.5,
                        "topCandidate": {"type": "WALKING", "probability": 0.9}},
           "timelinePath": [{"point": "48.855°, 2.355°", "time": "2024-01-01T11:30:00Z"}]}
        ],
        "rawSignals": [
          {"position": {"LatLng": "48.8566°, 2.3522°", "accuracyMeters": 13, "altitudeMeters": 35.5,
                        "speedMetersPerSecond": -1, "timestamp": "2024-01-01T12:00:00Z"}},
          {"wifiScan": {"deliveryTime": "2024-01-01T12:00:00Z", "devicesRecords": [{"mac": 123456789012345, "rawRssi": -50}]}},
          {"activityRecord": {"probableActivities": [{"type": "STILL", "confidence": -0.5}]}}
        ],
        "userLocationProfile": {"frequentPlaces": [{"placeId": "P1", "placeLocation": "48.85°, 2.35°", "label": "HOME"}]}}
        """#)
        XCTAssertEqual(outcome.visits, [HistoryVisit(start: Date(timeIntervalSince1970: 1_704_099_600), end: Date(timeIntervalSince1970: 1_704_103_200),
                                                     latitude: 48.85, longitude: 2.35, placeId: "P1", semanticType: "HOME",
                                                     utcOffset: 3600)])
        XCTAssertEqual(outcome.points.map(\.fix.latitude), [48.855, -27.41, 48.86, 48.8566])
        XCTAssertEqual(outcome.points.map(\.utcOffset), [nil, nil, nil, nil], "a Z time states no zone")
        XCTAssertEqual(outcome.points.last?.fix.speed, nil, "a negative speed is dropped, not the point")
        XCTAssertEqual(outcome.points.last?.fix.altitude, 35.5)
        XCTAssertEqual(outcome.skipped, ["record that is not a point": 2, "no time": 1])
        XCTAssertEqual(outcome.segments, [HistorySegment(start: Date(timeIntervalSince1970: 1_704_106_800), end: Date(timeIntervalSince1970: 1_704_110_400),
                                                         startPoint: .init(latitude: -27.41, longitude: 163.56),
                                                         endPoint: .init(latitude: 48.86, longitude: 2.36), distance: 900.5, mode: "WALKING")])
    }

    func testIOSQuotedNumbersGeoStringsAndOffsetsFromTheStart() throws {
        let outcome = read(.iosTimeline, """
        [
          {"timelinePath": [{"point": "geo:27.720007,-97.348044", "durationMinutesOffsetFromStartTime": "12"}],
           "endTime": "2023-08-27T22:00:00.000Z", "startTime": "2023-08-27T20:00:00.000Z"},
          {"endTime": "2023-08-27T17:04:26.999-05:00", "startTime": "2023-08-27T15:48:56.000-05:00",
           "visit": {"hierarchyLevel": "0", "probability": "-0.1",
                     "topCandidate": {"probability": "0.78", "semanticType": "Unknown", "placeID": "ChIJx", "placeLocation": "geo:27.720022,-97.347951"}}},
          {"endTime": "2023-08-28T10:00:00Z", "startTime": "2023-08-28T09:00:00Z",
           "activity": {"start": "geo:27.7,-97.3", "end": "geo:0.000000,0.000000", "distanceMeters": "1200.5",
                        "topCandidate": {"type": "KNxDHIcTwQsRGbsUlqVP", "probability": "0.0"}}}
        ]
        """)
        XCTAssertEqual(outcome.points.map(\.fix.timestamp.timeIntervalSince1970), [1_693_166_400 + 720, 1_693_213_200])
        XCTAssertEqual(outcome.visits.first?.placeId, "ChIJx")
        XCTAssertEqual(outcome.visits.first?.utcOffset, -5 * 3600, "the zone the visit was lived in, as its times say")
        XCTAssertEqual(outcome.points.map(\.utcOffset), [nil, nil])
        XCTAssertEqual(outcome.visits.first?.end.timeIntervalSince1970 ?? 0, 1_693_173_866.999, accuracy: 1e-6)
        XCTAssertEqual(outcome.skipped, ["0,0 position": 1])
        XCTAssertEqual(outcome.segments, [HistorySegment(start: Date(timeIntervalSince1970: 1_693_213_200), end: Date(timeIntervalSince1970: 1_693_216_800),
                                                         startPoint: .init(latitude: 27.7, longitude: -97.3), endPoint: nil,
                                                         distance: 1200.5, mode: "KNxDHIcTwQsRGbsUlqVP")],
                       "quoted numbers, and a 0,0 end that is no place")
    }

    func testTimelineEditsWithoutPositionsImportNothingAndSaySo() {
        let bytes = Array(#"{"timelineEdits": [{"deviceId": "0", "placeAggregates": {"placeAggregateInfo": [{"point": {"latE7": 1, "lngE7": 2}}]}}]}"#.utf8)
        XCTAssertEqual(JSONHistorySniffer.format(of: bytes[...]), .timelineEdits)
        let outcome = JSONHistoryOutcome.read(.timelineEdits, bytes, chunkSize: 5)
        XCTAssertEqual(outcome.items, [])
        XCTAssertEqual(outcome.error, HistoryFileError.nothingToImport(TimelineEditsMachine.noPositionsReason))
        XCTAssertEqual(outcome.error?.holdsNoPoints, true)
        let with = read(.timelineEdits, """
        {"timelineEdits": [{"deviceId": "-1613859921", "rawSignal": {"signal": {"position": {
          "point": {"latE7": 355831402, "lngE7": -1193393903}, "accuracyMm": 12000, "timestamp": "2025-08-15T14:32:18.000Z"}}}}]}
        """)
        XCTAssertEqual(with.points.first?.fix.horizontalAccuracy, 12)
        XCTAssertEqual(with.points.first?.device, "-1613859921")
    }

    func testOwnTracksShapes() {
        let array = read(.ownTracksJSON, """
        [{"_type": "location", "lat": "61.195709", "lon": 9, "tst": 1700000000, "vel": 36, "cog": 90, "tid": "ph", "acc": -1},
         {"_type": "transition", "lat": 61, "lon": 9, "tst": 1700000000},
         {"_type": "lwt", "tst": 1000}]
        """)
        XCTAssertEqual(array.points.first?.fix.speed, 10, "vel is km/h")
        XCTAssertEqual(array.points.first?.fix.latitude, 61.195709)
        XCTAssertEqual(array.points.first?.device, "ph")
        XCTAssertNil(array.points.first?.fix.horizontalAccuracy)
        XCTAssertEqual(array.skipped, ["record that is not a point": 2])
        let api = read(.ownTracksJSON, #"{"data": [{"_type": "location", "lat": 1, "lon": 2, "tst": 1700000000}, {"lat": 3, "lon": 4, "tst": 1700000001}]}"#)
        XCTAssertEqual(api.points.map(\.fix.latitude), [1, 3])
        let single = read(.ownTracksJSON, #"{"_type": "location", "tst": 0, "lat": 0.0, "lon": 0.0}"#)
        XCTAssertEqual(single.skipped, ["0,0 position": 1])
    }

    func testGeoJSONPointsLinesWithCoordTimesAndOverland() throws {
        let collection = read(.geojson, """
        {"features": [
          {"type": "Feature", "properties": {"coordTimes": [["2020-01-01T00:00:00Z", "2020-01-01T00:00:01Z"], ["2020-01-01T00:00:02Z"]]},
           "geometry": {"type": "MultiLineString", "coordinates": [[[13.4, 52.5, 34], [13.5, 52.6]], [["13.6", "52.7"]]]}},
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [28, 36]}, "properties": {"date": "2016-06-21T06:09:33Z", "timestamp": 1466489374}},
          {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[1, 2], [3, 4]]}, "properties": {"time": "2016-06-21T06:09:33Z"}},
          {"type": "Feature", "geometry": null, "properties": {}}
        ], "type": "FeatureCollection"}
        """)
        XCTAssertEqual(collection.points.map(\.fix.latitude), [52.5, 52.6, 52.7, 36])
        XCTAssertEqual(collection.points.first?.fix.altitude, 34)
        XCTAssertEqual(collection.points.last?.fix.timestamp.timeIntervalSince1970, 1_466_489_374, "timestamp before date")
        XCTAssertEqual(collection.skipped, ["no time": 2, "record that is not a point": 1])
        let overland = read(.geojson, """
        {"locations": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [-122.030581, 37.3318]},
          "properties": {"timestamp": "2015-10-01T08:00:00-0700", "speed": 4, "horizontal_accuracy": 30, "device_id": "iphone"}}]}
        """)
        XCTAssertEqual(overland.points.first?.device, "iphone")
        XCTAssertEqual(overland.points.first?.fix.timestamp.timeIntervalSince1970, 1_443_711_600)
    }

    func testFilesOfNoKnownJSONFormatAreNotClaimed() {
        for json in [#"{"deviceSettings": [{"deviceTag": -1}]}"#, #"{"locations": [{"lat": 52.52, "lon": 13.4, "time": "2024-06-01T10:00:00Z"}]}"#,
                     "[]", "[1, 2]", "\"text\"", "<gpx/>"] {
            XCTAssertNil(JSONHistorySniffer.format(of: Array(json.utf8)[...]), json)
        }
    }
}
