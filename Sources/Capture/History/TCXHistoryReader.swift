import Foundation
import Support
import Configuration
import Network

/// Garmin's Training Center XML, streamed: every `Trackpoint` of activities and courses with its
/// `Time` and `Position` (a point without a position, an indoor run's heart rate, is skipped).
package struct TCXHistoryReader: XMLHistoryReader {
    package static let format = HistoryFormat.tcx
    package static let rootElement = "TrainingCenterDatabase"
    package let stream = XMLStream()
    private var machine = XMLPointReaderStateMachine(.init(
        root: rootElement, formatName: "TCX", records: ["Trackpoint": 0],
        destination: { name, parent in
            switch (name, parent?.name) {
            case ("Time", "Trackpoint"), ("AltitudeMeters", "Trackpoint"),
                 ("LatitudeDegrees", "Position"), ("LongitudeDegrees", "Position"):
                return .value(record: "Trackpoint", key: name)
            default:
                return nil
            }
        }))

    package init() {}

    package mutating func handle(_ event: XMLStream.Event, _ emit: (HistoryItem) throws -> Void) throws {
        switch machine.handle(event) {
        case .none, .text: break
        case .fail(let error): throw error
        case .closed(let point):
            let latitude = point.last("LatitudeDegrees"), longitude = point.last("LongitudeDegrees")
            guard latitude != nil || longitude != nil else { return try emit(.skipped(.badPosition)) }
            let timeText = point.last("Time")
            let time = timeText.flatMap(HistoryTimes.parseStated)
            try emit(HistoryPoints.item(latitude: latitude.flatMap(HistoryPoints.number),
                                        longitude: longitude.flatMap(HistoryPoints.number),
                                        altitude: point.last("AltitudeMeters").flatMap(HistoryPoints.number),
                                        time: time?.date, timeGiven: timeText != nil, utcOffset: time?.utcOffset))
        }
    }
}
