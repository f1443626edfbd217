import Foundation
import Support
import Configuration
import Network

/// Garmin's Training Center XML, streamed: every `Trackpoint` of activities and courses with its
/// `Time` and `Position` (a point without a position, an indoor run's heart rate, is skipped).
package struct TCXHistoryReader: XMLHistoryReader {
    package static let format = HistoryFormat.tcx
    static let valueElements: Set<String> = ["Time", "LatitudeDegrees", "LongitudeDegrees", "AltitudeMeters"]

    package let stream = XMLStream()
    private var started = false
    private var depth = 0
    private var pointDepth: Int?
    private var values: [String: String] = [:]

    package init() {}

    package static func recognizes(prefix: ArraySlice<UInt8>) -> Bool {
        XMLStream.rootName(prefix) == "TrainingCenterDatabase"
    }

    package mutating func handle(_ event: XMLStream.Event, _ emit: (HistoryItem) throws -> Void) throws {
        switch event {
        case .start(let element):
            depth += 1
            if !started {
                guard element.name == "TrainingCenterDatabase" else {
                    throw HistoryFileError("not TCX: the root element is <\(element.name)>", at: .line(element.line))
                }
                started = true
            }
            if element.name == "Trackpoint", pointDepth == nil {
                pointDepth = depth
                values = [:]
            }
        case let .end(name, _, text):
            defer { depth -= 1 }
            guard let pointDepth else { return }
            if Self.valueElements.contains(name), depth > pointDepth, depth <= pointDepth + 2 {
                values[name] = text
            } else if depth == pointDepth {
                self.pointDepth = nil
                guard values["LatitudeDegrees"] != nil || values["LongitudeDegrees"] != nil else {
                    try emit(.skipped(.badPosition))
                    return
                }
                let time = values["Time"].flatMap(HistoryTimes.parseStated)
                try emit(HistoryPoints.item(latitude: values["LatitudeDegrees"].flatMap(HistoryPoints.number),
                                            longitude: values["LongitudeDegrees"].flatMap(HistoryPoints.number),
                                            altitude: values["AltitudeMeters"].flatMap(HistoryPoints.number),
                                            time: time?.date, timeGiven: values["Time"] != nil, utcOffset: time?.utcOffset))
            }
        }
    }
}
