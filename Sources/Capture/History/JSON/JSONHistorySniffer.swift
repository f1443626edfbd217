import Foundation

/// Which JSON history format a file is, from its first bytes: the keys at the top and inside the
/// first records, the values of `type`/`_type` and `geo:` strings. One decision for all JSON
/// readers, so no two of them claim the same file (Overland's batches and Records.json both start
/// with `"locations"`; only the records' keys tell them apart).
package enum JSONHistorySniffer {
    enum Key: Int32, CaseIterable {
        case locations, latitudeE7, longitudeE7, timestampMs, timelineObjects, placeVisit, activitySegment
        case semanticSegments, rawSignals, userLocationProfile, timelineEdits, features, geometry
        case type, underscoreType, data, tst, lat, lon, visit, activity, timelinePath, timelineMemory
    }
    static let keys = JSONKeyTable(["locations", "latitudeE7", "longitudeE7", "timestampMs", "timelineObjects",
                                    "placeVisit", "activitySegment", "semanticSegments", "rawSignals",
                                    "userLocationProfile", "timelineEdits", "features", "geometry", "type", "_type",
                                    "data", "tst", "lat", "lon", "visit", "activity", "timelinePath",
                                    "timelineMemory"])

    final class Observer: HistoryJSONMachine {
        var topIsArray: Bool?
        /// Keys of the top object, or of the top array's elements.
        var topKeys = Set<Key>()
        var anyKeys = Set<Key>()
        var geoStrings = false
        var featureType = false
        var locationType = false
        var otherType = false

        private func note(_ path: JSONPath) {
            for index in 0..<min(path.count, 8) {
                guard let key = Key(rawValue: path[index]) else { continue }
                anyKeys.insert(key)
                if index == (topIsArray == true ? 1 : 0) { topKeys.insert(key) }
            }
        }

        override func start(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
            if path.count == 0 { topIsArray = array }
            note(path)
        }

        override func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError) {
            if path.count == 0 { topIsArray = false }
            note(path)
            if value.kind == .string, value.bytes.starts(with: "geo:".utf8) { geoStrings = true }
            if path.last == Key.type.rawValue || path.last == Key.underscoreType.rawValue {
                if value.equals("Feature") || value.equals("FeatureCollection") { featureType = true }
                if value.equals("location") { locationType = true } else { otherType = true }
            }
        }
    }

    package static func format(of prefix: ArraySlice<UInt8>) -> HistoryFormat? {
        let observer = Observer()
        let stream = JSONStream(keys: keys, handler: observer)
        // The prefix ends anywhere: what was read before the cut (or before an error) decides.
        try? stream.feed(prefix) {}
        guard let topIsArray = observer.topIsArray else { return nil }
        let top = observer.topKeys, any = observer.anyKeys
        if topIsArray {
            if !top.isDisjoint(with: [.visit, .activity, .timelinePath, .timelineMemory]) || observer.geoStrings {
                return .iosTimeline
            }
            if observer.featureType || top.contains(.geometry) { return .geojson }
            if !top.isDisjoint(with: [.underscoreType, .tst]) || observer.locationType { return .ownTracksJSON }
            return nil
        }
        if !top.isDisjoint(with: [.semanticSegments, .rawSignals, .userLocationProfile]) { return .androidTimeline }
        if top.contains(.timelineObjects) { return .googleSemantic }
        if top.contains(.timelineEdits) { return .timelineEdits }
        if top.contains(.locations) {
            if observer.featureType || any.contains(.geometry) { return .geojson }
            if !any.isDisjoint(with: [.latitudeE7, .longitudeE7, .timestampMs]) { return .googleRecords }
            // `{"locations": []}`: an empty Records.json; anything else under "locations" is unknown.
            return any.isDisjoint(with: [.lat, .lon, .tst]) && !observer.otherType && !observer.locationType ? .googleRecords : nil
        }
        if observer.featureType || top.contains(.features) || top.contains(.geometry) { return .geojson }
        if top.contains(.underscoreType) || (any.contains(.tst) && !any.isDisjoint(with: [.lat, .lon, .underscoreType])) {
            return .ownTracksJSON
        }
        return nil
    }
}

/// The JSON readers by format, for the importer.
package enum JSONHistoryReaders {
    package static let all: [any (HistoryReader & SendableMetatype).Type] = [
        GoogleRecordsReader.self, GoogleSemanticReader.self, AndroidTimelineReader.self, IOSTimelineReader.self,
        TimelineEditsReader.self, OwnTracksJSONReader.self, GeoJSONReader.self,
    ]

    package static func reader(for format: HistoryFormat) -> (any HistoryReader)? {
        switch format {
        case .googleRecords: GoogleRecordsReader()
        case .googleSemantic: GoogleSemanticReader()
        case .androidTimeline: AndroidTimelineReader()
        case .iosTimeline: IOSTimelineReader()
        case .timelineEdits: TimelineEditsReader()
        case .ownTracksJSON: OwnTracksJSONReader()
        case .geojson: GeoJSONReader()
        default: nil
        }
    }
}
