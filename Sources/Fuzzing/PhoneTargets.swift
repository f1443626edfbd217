import Capture
import Foundation

/// What the phones send `enlog serve`: each app's payload parser, on the input as a body (with
/// and without a JSON content type) and as a query string, as the receiver hands it over. A
/// payload may be refused with a one-line error; every point it gives is a checked `Fix`.
extension FuzzTarget {
    package static let owntracks = phone("owntracks", .owntracks)
    package static let overland = phone("overland", .overland)
    package static let gpslogger = phone("gpslogger", .gpslogger)
    package static let traccar = phone("traccar", .traccar)

    private static func phone(_ name: String, _ app: PhoneProtocol) -> FuzzTarget {
        FuzzTarget(name) { bytes throws(FuzzFinding) in
            let text = String(decoding: bytes, as: UTF8.self)
            for message in [PhoneMessage(contentType: "application/json", body: bytes), PhoneMessage(body: bytes),
                            PhoneMessage(contentType: "application/x-www-form-urlencoded", body: bytes), PhoneMessage(query: text)] {
                do {
                    let points = try PhonePayload.parse(app, message)
                    for fix in points.fixes where !Fix.Limits.latitude.contains(fix.latitude) || !Fix.Limits.time.contains(fix.timestamp) {
                        throw FuzzFinding(description: "\(name): a point outside Fix.Limits: \(fix)")
                    }
                    if points.fixes.count > PhonePayload.pointLimit { throw FuzzFinding(description: "\(name): more points than the limit") }
                } catch let finding as FuzzFinding {
                    throw finding
                } catch {
                    try explain(error)
                }
            }
        }
    }
}
